/* leaksnap export: what the export library's files share (the kit). */
#ifndef LEAKSNAP_EXPORT_INTERNAL_H
#define LEAKSNAP_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <leaksnap/snapshot.h>

#include "kit.h"
#include "kit_json.h"
#include "kit_utf8.h"

#endif
