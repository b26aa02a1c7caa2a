/* leaksnap kit: function names shortened for reading, as pprof shows them.
 * A demangled C++ name is mostly template arguments and parameter types:
 *
 *   std::map<std::__cxx11::basic_string<char, ...>, int, ...>::operator[](...)
 *
 * reads as std::map<…>::operator[](…).  Each template argument list and
 * each parameter list that is not empty becomes the ellipsis between its
 * brackets, an operator's template arguments too, with or without a space
 * (std::operator+<…>(…), operator()<…>(…), operator<<<…>(…), operator< <…>(…));
 * everything else stays: the return type, the scopes, operator names
 * (operator<, operator<<, operator->, operator(), operator[], operator
 * new[], a conversion's type), lambdas and unnamed types ({lambda(…)#1},
 * their contents shortened the same way), "(anonymous namespace)", the
 * qualifiers after a parameter list (const, &, &&, noexcept, volatile) and
 * compiler suffixes (.constprop.0, .cold).  ABI tags ("[abi:cxx11]") are
 * dropped.  Parentheses around the name of a function that returns a
 * pointer or reference to a function, a member function or an array are
 * not a parameter list: their contents are shortened, so the name stays
 * (void (*std::signal(…))(…), void (Foo::*Bar::get<…>(…) const)(…)).
 * A '<' that starts a name (Rust's "<T as Trait>::f") is a qualified
 * path, not template arguments: its contents are shortened, not hidden.
 * A name whose brackets do not balance is left whole.  The report page
 * (report/util.js, shortName) follows the same rules. */
#ifndef LEAKSNAP_KIT_NAMES_H
#define LEAKSNAP_KIT_NAMES_H

#include <stddef.h>

/* @name shortened, with @ellipsis ("…", or "..." for an ASCII terminal)
 * standing for what is left out, written to @out (@size bytes, always
 * NUL-terminated when @size > 0) as snprintf does.  Returns the length of
 * the whole short name: a result of @size or more was cut.  The short
 * name is at most strlen(@name) + 2 * strlen(@ellipsis) * (brackets)
 * bytes; kit_name_short_max() bounds it. */
size_t kit_name_shorten(const char *name, const char *ellipsis, char *out, size_t size);
/* A size for @out that always suffices for @name (NUL included). */
size_t kit_name_short_max(const char *name, const char *ellipsis);

#endif /* LEAKSNAP_KIT_NAMES_H */
