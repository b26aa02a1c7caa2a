/* leaksnap hook: the in-app build's state, shared by inapp.c (start, stop,
 * options, metadata) and inapp_patch.c (modules and their GOT slots).
 * Internal to hook/. */
#ifndef LEAKSNAP_HOOK_INAPP_H
#define LEAKSNAP_HOOK_INAPP_H

#include <regex.h>
#include <time.h>

#include "hook_internal.h"

#ifdef HOOK_INAPP

struct buf;

/* A loaded module the patcher has looked at. */
enum inapp_mod_kind {
	INAPP_MOD_WATCHED, /* its allocation slots are ours */
	INAPP_MOD_OTHER,   /* only dlopen, dlclose, exit */
	INAPP_MOD_SKIPPED, /* the patcher could not read it (@why) */
};

struct inapp_mod {
	/* which module: dl_iterate_phdr's base, headers and name pointer */
	uintptr_t base;
	const void *phdr;
	const char *name_ptr;
	uintptr_t span;    /* the end of its highest segment, from base */
	uint32_t path;     /* offset of its path in inapp.paths */
	uint8_t kind;      /* enum inapp_mod_kind */
	bool seen;         /* (during a scan) */
	const char *why;   /* INAPP_MOD_SKIPPED: got_find's reason */
	size_t first_rec, nrecs; /* its slots in inapp.recs */
};

/* A slot changed: put @old back at stop, if it still holds @ours. */
struct inapp_rec {
	uintptr_t addr, old, ours;
	unsigned name; /* which function (inapp_patch.c's names[]) */
};

struct inapp_state {
	bool started;
	unsigned flags;         /* LEAKSNAP_START_* */
	bool have_re;
	regex_t re;
	char libs_text[1024];
	struct timespec started_at;
	struct inapp_mod *mods; /* hook_map()'ed */
	size_t nmods, mods_cap;
	struct inapp_rec *recs; /* hook_map()'ed */
	size_t nrecs, recs_cap;
	struct buf *paths;
	/* glibc's count of unloads at the last scan and at this one
	 * (dlpi_subs) */
	unsigned long long subs, scan_subs;
	bool subs_known, scan_subs_known;
	bool scan_loading; /* this scan met a module still being loaded */
};

/* Both under the in-app lock, which also serializes every got_swap().
 * Never held around a call that takes a lock of the loader's other than
 * dl_iterate_phdr's (dlsym, dladdr: a thread inside dlopen, running a
 * constructor that starts, stops or loads, holds the loader's lock and
 * waits for ours): inapp_resolve() is called before taking it. */
extern struct inapp_state inapp;
void inapp_lock(void);
void inapp_unlock(void);
/* This thread holds the lock. */
bool inapp_lock_mine(void);
/* Look up what the slots' replacements call (dlopen, operator new...):
 * before taking the lock. */
void inapp_resolve(void);

/* Patch the modules not seen yet, forget those gone. */
void inapp_scan_locked(void);
/* Put every slot back; returns how many were left (changed since). */
int inapp_unpatch_locked(void);
/* Forget every module and slot (after unpatching). */
void inapp_forget_locked(void);
/* inapp_watched=, inapp_skipped=, inapp_slots= lines. */
void inapp_meta_modules_locked(struct buf *meta);

#endif
#endif
