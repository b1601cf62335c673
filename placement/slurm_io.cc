// Stub: being written.
#include "placement/slurm_io.h"
