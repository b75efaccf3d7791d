# Self-play: jobs of selfplay.games_per_job (K) games, one game file per game, written as each game ends;
# then one marker per generation that verifies them. Generation g's games are played by model
# g - selfplay.model_lag: with a lag of 1 they are played while model g trains. Self-play has the most jobs per generation: its inputs
# and params are constants (the config path is a plain string: the model input already orders it after it).
#
# A job's output is its record, games/genGGGG/jobJJJJJ.json, written after its last game (each game's name,
# size and SHA-256): Snakemake tracks one file per job, not one per game, so planning a generation matches
# ceil(games / K) files against one rule, and its metadata grows by one entry per job. A retried job keeps
# the game files its killed attempt wrote and plays only the rest (to the same bytes). Job j plays games
# jK .. jK+K-1, the last job the rest (minigo.selfplay_jobs).


rule selfplay:
    input:
        model=selfplay_model,
    output:
        record=SELFPLAY_JOB,
    log:
        layout.selfplay_log_path(ROOT, "{generation}", "{job}"),
    wildcard_constraints:
        generation=PLANNED,
        job=r"\d{5}",
    priority: selfplay_priority
    threads: RUN.selfplay.threads
    resources:
        runtime=60,
    params:
        minigo=MINIGO,
        config=EFFECTIVE_CONFIG,
        first=job_first_game,
        games=job_game_count,
        out=GAME_PATTERN,
        model_generation=selfplay_model_generation,
    shell:
        "{params.minigo} selfplay --config {params.config:q} --model {input.model:q}"
        " --model-generation {params.model_generation:q}"
        " --generation {wildcards.generation:q} --game {params.first:q} --count {params.games:q}"
        " --out {params.out:q} --record {output.record:q} > {log:q} 2>&1"


rule games_complete:
    # Depends on the generation's job records; everything downstream depends on this one small file. From the
    # bytes it checks it also samples the games for the windows that will read them (window.read_threads
    # readers): the generation's window parts (minigo_core/data/parts.py), their parts.json written before
    # the marker. The windows depend on the marker alone: one without usable parts reads the game files.
    input:
        config=ancient(EFFECTIVE_CONFIG),
        records=job_records,
    output:
        marker=GAMES_COMPLETE,
        parts=WINDOW_PARTS,
    log:
        layout.generation_log_path(ROOT, "games_complete", "{generation}"),
    wildcard_constraints:
        generation=PLANNED,
    priority: 10
    threads: RUN.window.read_threads
    resources:
        runtime=30,
    params:
        minigo=MINIGO,
    shell:
        "{params.minigo} games-complete --config {input.config:q}"
        " --generation {wildcards.generation:q} --out {output.marker:q} > {log:q} 2>&1"
