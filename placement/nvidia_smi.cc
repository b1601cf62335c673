// Stub: being written.
#include "placement/nvidia_smi.h"
