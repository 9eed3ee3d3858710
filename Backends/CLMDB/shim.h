#ifndef OBJECTGRAPH_CLMDB_SHIM_H
#define OBJECTGRAPH_CLMDB_SHIM_H
#include <lmdb.h>

#ifdef __linux__
#include <sys/types.h>
/* fallocate(2), a GNU extension that Swift's Glibc module does not export: the store reserves
   the blocks of LMDB's lock file with it before LMDB maps that file (LMDBLockFile.swift). */
extern int fallocate(int fd, int mode, off_t offset, off_t len);
/* FALLOC_FL_KEEP_SIZE from <linux/falloc.h>: allocate blocks without changing the size. */
#define OBJECTGRAPH_FALLOC_FL_KEEP_SIZE 0x01
#endif

#endif
