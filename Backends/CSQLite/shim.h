#ifndef OBJECTGRAPH_CSQLITE_SHIM_H
#define OBJECTGRAPH_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
