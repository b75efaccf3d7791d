# Window (sample the last W generations' games into one shard per rank) and data-parallel training.


rule window:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        markers=window_markers,
    output:
        manifest=f"{WINDOW}/manifest.json",
        shards=SHARDS,
    wildcard_constraints:
        generation=PLANNED,
    params:
        out_dir=WINDOW,
    threads: RUN.window.read_threads
    log:
        f"{LOGS}/window/gen{{generation}}.log",
    resources:
        runtime=60,
    shell:
        "{MINIGO} window --config {input.config:q} --generation {wildcards.generation:q}"
        " --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule train:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        manifest=f"{WINDOW}/manifest.json",
        shards=SHARDS,
        parent=parent_model,
    output:
        model=MODEL,
        metrics=f"{TRAIN}/metrics.jsonl",
    wildcard_constraints:
        generation=PLANNED,
    params:
        window_dir=WINDOW,
        work_dir=TRAIN,
        launcher=launcher,
        ranks=ranks_option,
    threads: RUN.train.ranks * RUN.train.threads_per_rank
    log:
        f"{LOGS}/train/gen{{generation}}.log",
    resources:
        tasks=RUN.train.ranks,
        cpus_per_task=RUN.train.threads_per_rank,
        mpi="",
        runtime=120,
    shell:
        "{params.launcher} {MINIGO} train --config {input.config:q} --generation {wildcards.generation:q}"
        " --window-dir {params.window_dir:q} --parent {input.parent:q} --out {output.model:q}"
        " {params.ranks} --work-dir {params.work_dir:q} > {log:q} 2>&1"
