// Stub: being written.
#include "placement/topology.h"
