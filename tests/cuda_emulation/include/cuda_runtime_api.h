// The CPU emulation's runtime API (cuda_runtime.h holds it all), for generated headers that
// include <cuda_runtime_api.h>.
#include "cuda_runtime.h"
