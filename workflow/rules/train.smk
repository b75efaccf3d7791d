# Window (sample the last W generations' games into one shard per rank) and data-parallel training.
# Both, and games-complete, are the critical path: priority 10 starts them before waiting self-play jobs.
# Training runs with --no-wall-time: the model file is then a function of its inputs (reruns are
# byte-identical); wall times are in train/genGGGG/metrics.jsonl.
# Its ranks meet at a TCP store that rank 0 hosts (minigo_core/cluster/). With resource mpi="srun"
# (profiles/slurm) they are the tasks of one `srun ... --kill-on-bad-exit=1` step inside the job; the
# resource `nodes`, unset here (Slurm places the tasks), spreads them over that many nodes:
# `--set-resources train:nodes=2` gives sbatch `--nodes=2 --ntasks={ranks}` and srun `-N 2 --ntasks-per-node`.


rule window:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        markers=window_markers,
    output:
        manifest=WINDOW_MANIFEST,
        shards=SHARDS,
    log:
        layout.generation_log_path(ROOT, "window", "{generation}"),
    wildcard_constraints:
        generation=PLANNED,
    priority: 10
    threads: RUN.window.read_threads
    resources:
        runtime=60,
    params:
        minigo=MINIGO,
        out_dir=directory_of("manifest"),
    shell:
        "{params.minigo} window --config {input.config:q} --generation {wildcards.generation:q}"
        " --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule train:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        manifest=WINDOW_MANIFEST,
        shards=SHARDS,
        parent=parent_model,
    output:
        model=MODEL,
        metrics=TRAIN_METRICS,
    log:
        layout.generation_log_path(ROOT, "train", "{generation}"),
    wildcard_constraints:
        generation=PLANNED,
    priority: 10
    threads: RUN.train.ranks * RUN.train.threads_per_rank
    resources:
        tasks=RUN.train.ranks,
        cpus_per_task=RUN.train.threads_per_rank,
        mpi="",
        runtime=120,
    params:
        minigo=MINIGO,
        window_dir=directory_of("manifest"),
        work_dir=directory_of("metrics"),
        launcher=launcher,
        ranks=ranks_option,
    shell:
        "{params.launcher} {params.minigo} train --config {input.config:q}"
        " --generation {wildcards.generation:q} --window-dir {params.window_dir:q}"
        " --parent {input.parent:q} --out {output.model:q} {params.ranks}"
        " --work-dir {params.work_dir:q} --no-wall-time > {log:q} 2>&1"
