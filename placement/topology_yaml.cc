// Stub: being written.
#include "placement/topology_yaml.h"
