// Stub: being written.
#include "placement/hostlist.h"
