#pragma once
// The run functions of the stages (one file each), registered in stage.cpp. Each does what its
// executable does between parsing the options and printing: same library calls, same metadata,
// same output bytes.
#include "pipeline/stage.hpp"

namespace hp::pipeline {

nlohmann::json run_voxelize(const StageContext& ctx);  // stage_voxelize.cpp (haptic-voxelize)
nlohmann::json run_distance(const StageContext& ctx);  // stage_distance.cpp (haptic-distance)
nlohmann::json run_pointshell(const StageContext& ctx);  // stage_pointshell.cpp (haptic-pointshell)
nlohmann::json run_spheretree(const StageContext& ctx);  // stage_spheretree.cpp (haptic-spheretree)
nlohmann::json run_cfm(const StageContext& ctx);         // stage_cfm.cpp (haptic-cfm)
nlohmann::json run_query(const StageContext& ctx);       // stage_query.cpp (haptic-query)

}  // namespace hp::pipeline
