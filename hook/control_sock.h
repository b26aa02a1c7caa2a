/* leaksnap hook: the control socket's name, binding and unlinking
 * (control_sock.c), for control.c.  Internal to hook/. */
#ifndef LEAKSNAP_HOOK_CONTROL_SOCK_H
#define LEAKSNAP_HOOK_CONTROL_SOCK_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>

/* "@leaksnap.<pid>" or the path of the socket last opened (or tried). */
extern char ctl_sock_name[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];

/* Bind and listen on this process's name (hook_cfg.control); @forked: a
 * forked child's, PATH.<pid>.  Returns a non-blocking, close-on-exec
 * descriptor, or -1 with *@why the reason to say on stderr, or NULL when
 * there is nothing to say.  A path socket of this process's is recorded
 * (its device and inode) for ctl_sock_unlink_ours. */
int ctl_sock_open(bool forked, const char **why);

/* Unlink this process's path socket, if the file at its path is still the
 * one it bound. */
void ctl_sock_unlink_ours(void);

/* In a forked child: the parent's path socket is not the child's to unlink. */
void ctl_sock_forget(void);

/* Remove the PATH.<pid> sockets beside this process's path socket that
 * are stale: the pid is gone and nothing listens.  (The control thread,
 * once started: it allocates, untracked.) */
void ctl_sock_sweep(void);

#endif
