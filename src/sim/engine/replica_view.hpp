#pragma once
/// \file
/// The plan the engine plays for replicas held once (Plan::replicas,
/// src/plan/plan_replicas.hpp): replica 0's ops as they are, and each
/// collective spanning the replicas widened to every replica's participants
/// (replica r's devices r·devices_each + d), its input and output lists
/// replica 0's ids once per replica. The engine reads replica 0's and counts
/// each of them written for every replica at once (engine.hpp), so a ring
/// over N devices costs its N participants and steps, not N replicas' ops.

#include "plan/plan.hpp"

namespace splitscope {

/// `plan` with its spanning collectives widened; `plan` itself (a copy) when
/// it holds no replicas.
Plan widened_for_replicas(const Plan& plan);

}  // namespace splitscope
