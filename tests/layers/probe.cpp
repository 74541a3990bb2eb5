// A source compiled as a part of one module: its target links that module's library only and
// includes HP_PROBE_HEADER, set per probe (tests/layers/probes.cmake). A header of the module or of
// a module below must compile; a header of any other module must not be found.
#include HP_PROBE_HEADER
