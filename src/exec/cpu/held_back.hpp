#pragma once
/// \file
/// A straggler's first task (`--straggler D:MS`): the work after a sleep of
/// `ms` milliseconds, so that the core is someone else's meanwhile, as on a
/// machine that is busy elsewhere. The cpu executor and an MPI rank wrap a
/// held-back device's first task of every run with it.

#include "exec/cpu/task_graph.hpp"

namespace splitscope {

TaskFunction held_back(TaskFunction work, double ms);

}  // namespace splitscope
