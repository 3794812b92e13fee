#pragma once
// A sweep as a Slurm job array (`ffn-lab slurm`): the folder layout under
// OUT and the two job scripts. Task I runs `sweep --shard I/N --out
// OUT/shards/I`; the merge job, after the whole array (afterok), joins
// OUT/shards into OUT/tables; scripts and logs go to OUT/slurm.
#include <cstddef>
#include <string>
#include <vector>

namespace ffn::runner {

struct SlurmArray {
    std::string config;                  // as the user gave it (a path, or a bundled name)
    std::vector<std::string> overrides;  // the --set texts
    std::string out;                     // OUT
    std::size_t shards = 0, cpus_per_task = 1, runs = 0;  // runs: the plan's, for the script's comment (and at least `shards`)
    std::string partition, time, mem;    // #SBATCH values; empty: Slurm's defaults
    std::string program, working_folder;  // this ffn-lab, and the folder the tasks start in (absolute)
};

struct SlurmScripts {
    std::string array, merge;  // the scripts' paths
    std::string tables;        // where the merged tables will be
};

// Checks every #SBATCH value (letters, digits and _-:.,=+/ only) and that
// OUT/shards holds no folder this array will not rewrite (an earlier,
// longer array's would spoil the merge), then writes both scripts. Throws
// ffn::Error naming the value or folder.
SlurmScripts write_slurm_scripts(const SlurmArray& array);

}  // namespace ffn::runner
