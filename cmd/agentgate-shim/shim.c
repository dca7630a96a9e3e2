/*
 * agentgate-shim: the step between fork and exec of a confined run
 * (docs/lifetime.md, "Write confinement").
 *
 * A run's supervisor (Go) cannot run code between fork and exec, and a Go
 * program costs milliseconds to start, so this small static C program does
 * that step. The supervisor forks and executes it with the run's standard
 * files as 0, 1, 2 and a status pipe; it sets up what it is told, then
 * executes the run's program in its place. It reads no environment and no
 * file of its own: everything comes in argv, and the run's environment is
 * passed through untouched.
 *
 *   agentgate-shim STATUSFD [options] -- PATH ARGV0 [ARG...]
 *
 *   -d FD        change into the directory open as FD (fchdir), first
 *   -u           new user namespace, mapping only the caller's uid and gid
 *                (lets an unprivileged caller make mounts below)
 *   -m           new mount namespace; every mount made private
 *   -r PATH      bind PATH read-only over itself (mount namespace; skipped
 *                when PATH is missing or a symlink)
 *   -h PATH      cover PATH: an empty read-only tmpfs over a directory,
 *                /dev/null over anything else (mount namespace; skipped
 *                when missing)
 *   -n           new network namespace, loopback up: no network but lo
 *   -l FD:FLAGS  enforce the Landlock ruleset open as FD
 *                (prctl NO_NEW_PRIVS, landlock_restrict_self FLAGS)
 *   -e D:I:S:M:C the identity PATH must have: device, inode, size,
 *                mtime and ctime in nanoseconds
 *   -P           probe: set everything up, then exit 0 instead of executing
 *                anything (the host learns whether the namespaces work)
 *
 *   agentgate-shim STATUSFD [options] -P
 * PATH is opened and checked against -e; an ELF program is then executed
 * through that very descriptor (execveat AT_EMPTY_PATH), a script (#!) by
 * its path right after the check (an interpreter opens its script by
 * name). STATUSFD is close-on-exec: the supervisor reads end of file when
 * the exec succeeded, else one message before the shim exits 127:
 *   "C text"        the confinement could not be set up
 *   "X text"        PATH is not the file -e describes
 *   "E errno text"  the exec failed
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

/* struct mount_attr of <linux/mount.h>, spelled out for older headers. */
struct shim_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int status_fd = -1;

/* fail reports kind ('C', 'X' or 'E' with errno) on the status pipe, and
 * on stderr when there is no pipe, and exits 127. */
static void fail(char kind, int err, const char *fmt, ...) {
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char line[1200];
	int n;
	if (kind == 'E')
		n = snprintf(line, sizeof line, "E %d %s", err, msg);
	else
		n = snprintf(line, sizeof line, "%c %s", kind, msg);
	if (n < 0)
		n = 0;
	if (n >= (int)sizeof line)
		n = sizeof line - 1;
	int fd = status_fd >= 0 ? status_fd : 2;
	ssize_t w = write(fd, line, (size_t)n);
	(void)w;
	_exit(127);
}

/* write_file writes text to path (for the user namespace's maps). */
static int write_file(const char *path, const char *text) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* bind_ro binds path read-only over itself, through descriptors so that no
 * symlink swapped in meanwhile is followed. A missing path or a symlink is
 * left alone (the host checks those paths before and after the run). */
static void bind_ro(const char *path) {
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return;
		fail('C', 0, "opening %s to make it read-only: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) != 0)
		fail('C', 0, "stat %s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		close(fd);
		return;
	}
	int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree >= 0) {
		struct shim_mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
		if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
			fail('C', 0, "making the copy of %s read-only (mount_setattr): %s", path, strerror(errno));
		if (syscall(SYS_move_mount, tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
			fail('C', 0, "mounting the read-only copy of %s (move_mount): %s", path, strerror(errno));
		close(tree);
		close(fd);
		return;
	}
	if (errno != ENOSYS)
		fail('C', 0, "copying the mount of %s (open_tree): %s", path, strerror(errno));
	/* Before Linux 5.2/5.12: bind through the descriptor, remount by name. */
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	if (mount(self, self, NULL, MS_BIND | MS_REC, NULL) != 0)
		fail('C', 0, "binding %s: %s", path, strerror(errno));
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
		fail('C', 0, "remounting %s read-only: %s", path, strerror(errno));
	close(fd);
}

/* cover hides path: an empty read-only tmpfs over a directory, /dev/null
 * over anything else (a socket: connecting to it then fails). */
static void cover(const char *path) {
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return;
		fail('C', 0, "opening %s to hide it: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) != 0)
		fail('C', 0, "stat %s: %s", path, strerror(errno));
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	if (S_ISLNK(st.st_mode)) {
		close(fd);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mount("tmpfs", self, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0500") != 0)
			fail('C', 0, "hiding %s: %s", path, strerror(errno));
	} else if (mount("/dev/null", self, NULL, MS_BIND, NULL) != 0) {
		fail('C', 0, "hiding %s: %s", path, strerror(errno));
	}
	close(fd);
}

/* loopback_up brings lo up in a new network namespace. */
static void loopback_up(void) {
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail('C', 0, "socket for the loopback device: %s", strerror(errno));
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		fail('C', 0, "reading the loopback device's flags: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		fail('C', 0, "bringing the loopback device up: %s", strerror(errno));
	close(s);
}

/* parse_fd parses a non-negative descriptor number. */
static int parse_fd(const char *s) {
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > INT_MAX)
		fail('C', 0, "bad descriptor %s", s);
	return (int)v;
}

/* same_identity reports whether st is the file described by expect
 * ("dev:ino:size:mtime_ns:ctime_ns"). */
static int same_identity(const struct stat *st, const char *expect) {
	unsigned long long dev, ino;
	long long size, mtime, ctime;
	if (sscanf(expect, "%llu:%llu:%lld:%lld:%lld", &dev, &ino, &size, &mtime, &ctime) != 5)
		fail('C', 0, "bad identity %s", expect);
	long long m = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	long long c = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
	return (unsigned long long)st->st_dev == dev && (unsigned long long)st->st_ino == ino &&
	       (long long)st->st_size == size && m == mtime && c == ctime;
}

int main(int argc, char **argv) {
	extern char **environ;
	if (argc < 2)
		fail('C', 0, "usage: agentgate-shim STATUSFD [options] -- PATH ARGV0 [ARG...]");
	status_fd = parse_fd(argv[1]);
	if (fcntl(status_fd, F_SETFD, FD_CLOEXEC) != 0)
		fail('C', 0, "status descriptor: %s", strerror(errno));

	int dir_fd = -1, userns = 0, mountns = 0, netns = 0, ruleset_fd = -1, probe = 0;
	unsigned int ruleset_flags = 0;
	const char *expect = NULL;
	const char *ro[256], *hide[64];
	int nro = 0, nhide = 0;
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *opt = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(opt, "-u") == 0) {
			userns = 1;
		} else if (strcmp(opt, "-P") == 0) {
			probe = 1;
		} else if (strcmp(opt, "-m") == 0) {
			mountns = 1;
		} else if (strcmp(opt, "-n") == 0) {
			netns = 1;
		} else if (val == NULL) {
			fail('C', 0, "option %s needs a value", opt);
		} else if (strcmp(opt, "-d") == 0) {
			dir_fd = parse_fd(val), i++;
		} else if (strcmp(opt, "-r") == 0) {
			if (nro == (int)(sizeof ro / sizeof ro[0]))
				fail('C', 0, "too many read-only paths");
			ro[nro++] = val, i++;
		} else if (strcmp(opt, "-h") == 0) {
			if (nhide == (int)(sizeof hide / sizeof hide[0]))
				fail('C', 0, "too many hidden paths");
			hide[nhide++] = val, i++;
		} else if (strcmp(opt, "-l") == 0) {
			char *colon = strchr(val, ':');
			if (colon == NULL)
				fail('C', 0, "bad ruleset %s", val);
			*colon = '\0';
			ruleset_fd = parse_fd(val);
			ruleset_flags = (unsigned int)strtoul(colon + 1, NULL, 10);
			i++;
		} else if (strcmp(opt, "-e") == 0) {
			expect = val, i++;
		} else {
			fail('C', 0, "unknown option %s", opt);
		}
	}
	if (!probe && i + 2 >= argc)
		fail('C', 0, "no program and argv[0] after --");
	const char *path = probe ? NULL : argv[i + 1];
	char **target_argv = probe ? NULL : argv + i + 2;
	pid_t parent = getppid();

	if (dir_fd >= 0) {
		/* Before any new mount namespace: unshare moves the working
		 * directory into the new namespace's copy of its mount. */
		if (fchdir(dir_fd) != 0)
			fail('C', 0, "entering the run's directory: %s", strerror(errno));
		close(dir_fd);
	}
	if (userns) {
		uid_t uid = getuid();
		gid_t gid = getgid();
		/* The parent-death signal a supervisor asked for (none for a run
		 * the host started itself: its warden covers the host's death). */
		int pdeath = 0;
		if (prctl(PR_GET_PDEATHSIG, &pdeath) != 0)
			pdeath = 0;
		if (unshare(CLONE_NEWUSER) != 0)
			fail('C', 0, "creating a user namespace: %s", strerror(errno));
		char map[64];
		if (write_file("/proc/self/setgroups", "deny") != 0)
			fail('C', 0, "writing setgroups: %s", strerror(errno));
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		if (write_file("/proc/self/uid_map", map) != 0)
			fail('C', 0, "writing uid_map: %s", strerror(errno));
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		if (write_file("/proc/self/gid_map", map) != 0)
			fail('C', 0, "writing gid_map: %s", strerror(errno));
		/* The new credentials cleared the parent-death signal; ask
		 * again, and make sure the supervisor did not die meanwhile. */
		if (pdeath != 0 && (prctl(PR_SET_PDEATHSIG, pdeath) != 0 || getppid() != parent))
			fail('C', 0, "the run's supervisor is gone");
	}
	if (mountns || netns) {
		if (unshare((mountns ? CLONE_NEWNS : 0) | (netns ? CLONE_NEWNET : 0)) != 0)
			fail('C', 0, "creating a %s namespace: %s", mountns ? "mount" : "network", strerror(errno));
	}
	if (mountns) {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
			fail('C', 0, "making the mounts private: %s", strerror(errno));
		for (int k = 0; k < nro; k++)
			bind_ro(ro[k]);
		for (int k = 0; k < nhide; k++)
			cover(hide[k]);
	}
	if (netns)
		loopback_up();
	if (ruleset_fd >= 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			fail('C', 0, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
		if (syscall(SYS_landlock_restrict_self, ruleset_fd, ruleset_flags) != 0)
			fail('C', 0, "enforcing the Landlock ruleset: %s", strerror(errno));
		close(ruleset_fd);
	}
	if (probe)
		_exit(0);
	/* Nothing but 0, 1 and 2 reaches the program: whatever else this
	 * process holds (the status pipe, a descriptor its parent held without
	 * close-on-exec) is closed by the exec. Before Linux 5.11 the parent's
	 * own close-on-exec flags are all there is. */
	syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int readable = fd >= 0;
	if (fd < 0 && errno == EACCES)
		fd = open(path, O_PATH | O_CLOEXEC); /* executable, not readable */
	if (fd < 0)
		fail('E', errno, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0)
		fail('E', errno, "%s: %s", path, strerror(errno));
	if (expect != NULL && !same_identity(&st, expect))
		fail('X', 0, "the program %s changed since it was checked", path);
	char head[2] = {0, 0};
	int script = readable && pread(fd, head, 2, 0) == 2 && head[0] == '#' && head[1] == '!';
	if (!script) {
		syscall(SYS_execveat, fd, "", target_argv, environ, AT_EMPTY_PATH);
		if (errno != ENOSYS && errno != ENOENT)
			fail('E', errno, "%s: %s", path, strerror(errno));
	}
	/* A script (or no execveat): by name, checked once more. */
	struct stat now;
	if (expect != NULL && (stat(path, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino))
		fail('X', 0, "the program %s changed since it was checked", path);
	execve(path, target_argv, environ);
	fail('E', errno, "%s: %s", path, strerror(errno));
	return 127;
}
