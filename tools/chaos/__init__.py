"""Chaos run: kill -9 processes of a running workflow, kind by kind (or SIGTERM them, or fill its disk),
rerun until done, compare with an undisturbed run.

    python -m tools.chaos --workdir /tmp/chaos [--config config/tiny.yaml] [--kills 10] [--seed 1]
        [--kinds selfplay,train-rank,...] [--profile local|slurm]

1. Runs the config undisturbed in WORKDIR/A: the reference. A watcher notes how long each kind of process
   lives there, in wall and in CPU seconds (`work_clock`: the process's and its children's CPU; for the
   launcher of the training ranks, its whole job's), the clock of the kill moments of run B: a loaded
   machine stretches wall time, hardly CPU time.
2. Plans the kills (seeded, `kill_plan`): kinds drawn without repeats while possible from the kinds this
   config's run starts (`plannable_kinds`), in the order the pipeline starts them, Snakemake itself at a
   random place; or exactly the kinds of `--kinds`. The kinds:
     bootstrap, games_complete, window, evaluate   the `minigo` command of that rule's job
     selfplay          a self-play job of K > 1 games (`minigo selfplay --count K`); `selfplay-single`: K = 1
     selfplay-term     SIGTERM (a preemption, a time limit) instead of SIGKILL to a `selfplay` job: it must
                       stop within seconds, its finished game files whole, and its retry keep them
     disk-full         (root only) run B's root is a size-limited tmpfs of its own (`tools.chaos.disk`);
                       at the moment drawn for a `selfplay` job it is filled to the last byte, so every job
                       fails at its next write (ENOSPC: no temporary or partial file may stay), and freed
                       (the filler deleted) when that attempt has ended, before the rerun
     train             the launcher of the training ranks (`minigo train --ranks N`; under Slurm its `srun`)
     train-term        SIGTERM to that launcher, which passes it on to the ranks (srun forwards it): every
                       rank stops at the next step boundary, rank 0 writing a checkpoint; the rerun resumes
     train-rank        one training rank (under Slurm: a rank on node1)
     train-rank-node2  (Slurm, `--profile slurm`) a rank whose environment says SLURMD_NODENAME=node2
     node-loss         (Slurm) node2 dies at the moment drawn for a train-rank-node2: its slurmd, slurmstepd
                       and every process of its jobs SIGKILLed, the node marked down (as SlurmdTimeout
                       would: `python tests/cluster/slurm_cluster.py lose DIR node2`); the attempt goes on
                       on node1 (its failed jobs resubmitted there, the ranks of a retry on one node), and
                       node2 is brought back (`... restore DIR node2`) when the attempt ends
     node-loss-selfplay  (Slurm) the same node loss, at the moment drawn for a `selfplay` job that runs on
                       node2 (m of its K game files written): its retry, on node1, keeps them. Every
                       self-play job's first attempt is sent to node2 (`slurm_extra=--nodelist`), and the
                       training runs on one node (not with node-loss or train-rank-node2)
     pack              `minigo pack` of a generation that left the window (`storage.pack_old_generations`)
     ladder            `minigo ladder rate` of a model (its full rating, or its first one)
     snakemake         Snakemake itself, while a job of it runs (its jobs run on, as on a cluster)
   (ladder, ratings, plots, selfplay-term, train-term, disk-full and node-loss-selfplay only through
   `--kinds` or `--soak`: a
   drawn plan is the same for a seed as before they came.)
   `--soak` (`kills.soak_plan`): the default config (config.yaml, generations cut with `--set` where the hour
   does not fit), faults at least `--every` seconds apart in run B (default: 0.25 x run A's length / the
   faults: run B, with its reruns, is longer, and self-play ends before the final ratings), from every kind
   the run can meet (`soak_kinds`: the above, the SIGTERMs, a full disk when root, the ladder's ratings, the
   summary's jobs; under `--profile slurm` the training's node loss), each once, then repeats up to
   `--kills` (default twice the kinds) as the run allows (a repeat not reached is no problem: self-play, for
   one, ends long before the final ratings). Once the gap has passed, the next moment to come, of any kind
   still pending in the first round (then of any), is the next fault; a Snakemake kill still waits for the
   kills planned before it. The summary's jobs (seconds long, once, at the end) are struck within the gap.
3. Runs it again in WORKDIR/B and kills. Each planned kill waits for a process of its kind -- as long as the
   run lasts, over as many Snakemake attempts as it takes -- and hits it at a random moment of its life
   (seeded draws): a CPU reading drawn in 5-75 % of the shortest life of that kind in run A (halved after each
   miss of the kind: a process that ended first; the next one is aimed at); a multi-game self-play job, once m
   of its K game files are written (m drawn in 0..K-1; m = 0: a CPU reading), so that its retry must keep
   them; a pack, in one of three stages drawn (a CPU reading, once its temporary file exists: writing, once
   the pack exists: verifying and deleting the loose files). Every running process of a pending kind is aimed
   at, each at its own moment; the first moment to come is a kill, and the other processes of the job it hit
   (a launcher's ranks, a rank's launcher) are no longer aimed at. A Snakemake kill waits for the kills
   planned before it, and for a moment when a job runs and no process of a pending kind does. A kill is given
   up ("not reached", with the reason) only when an attempt ends without a process of its kind and a dry run
   plans no job that would start one (or the run finished). A killed job fails its attempt (local profile:
   retries 0), which Snakemake ends after its other jobs; a killed Snakemake leaves its jobs running: they
   (under Slurm: the run's jobs, until squeue no longer lists them as pending or running) are waited for and
   the lock is released with `--unlock`; then Snakemake starts again with `--rerun-incomplete` -- until no
   kill is pending and an attempt succeeds.
4. Checks run B: a final dry run has nothing left to do; no temporary (`.tmp-*`) file is left (one that a
   killed process wrote names it: its name holds the writer's pid); every artifact is valid (game files,
   packs: every member its SHA-256, every game readable; shards against their manifest checksums, models,
   JSON); run B is the same run as run A by
   `minigo_core.data.compare`: every artifact byte-identical, except the files that record wall-clock time
   (its WALL_CLOCK, compared with those fields removed). While run B runs, a watcher validates each artifact
   as soon as it appears under its final name: a half-written file under a final name is reported. For a
   killed self-play job: which of its game files existed at the kill, and whether its retry kept them (its
   record, its log's "kept N game files of an earlier attempt"); one it did not keep is a problem.

`--profile slurm` runs A and B through `profiles/slurm` on a running Slurm test cluster of two nodes
(`python tests/cluster/slurm_cluster.py start DIR`), with the test cluster's settings of
tests/cluster/test_slurm.py, the
training ranks spread over node1 and node2 (`--set-resources train:nodes=2`: `srun -n 2 -N 2 ...
--kill-on-bad-exit=1`; a retry on one node, `nodes` 1, as node2 may be down), and retries (`--retries`,
default 2) so that Snakemake resubmits a killed job.
Processes that slurmd starts are found in /proc like local ones (by their working directory); leftover
Slurm jobs of a run are cancelled at the end.

Both runs use the same relative root (`run`) inside their own working directory, so paths recorded inside
artifacts are the same. Prints a JSON report (per kind: planned, killed, not reached with the reason, and
each kill's pid, command, seconds into the process and attempt), then a table of the kinds; exit status 0
when every check held and every planned kill happened, 1 otherwise (each problem is described: which file,
which fields or bytes, which kill), 2 when the reference run itself failed.

The package, by role: `processes` (finding and classifying the run's processes, their clocks), `runs`
(Snakemake calls, the reference run, Slurm jobs), `kills` (the plan and run B's attempts and kills),
`checks` (validity, comparison, the report's table), `disk` (the tmpfs of a disk-full), `__main__` (the
command line).
"""
