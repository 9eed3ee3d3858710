#ifndef OBJECTGRAPH_CLMDB_SHIM_H
#define OBJECTGRAPH_CLMDB_SHIM_H
#include <lmdb.h>
#endif
