# Self-play: jobs of selfplay.games_per_job (K) games, one game file per game; then one marker per
# generation that verifies them. Self-play has the most jobs per generation: its inputs and params are
# constants (the config path is a plain string: the model input already orders it after the config).
#
# K = 1: one rule, one job per game (the {game} wildcard; Slurm job arrays). K > 1: Snakemake cannot compute
# a job's K outputs from a wildcard, so each job index j has its own rule, selfplay_jobJJJJ (games jK ..
# jK+K-1, the last job the rest: minigo.selfplay_jobs), {generation} its only wildcard. A missing game file
# is rebuilt by the job that owns it, which replays its K games to the same bytes.


if RUN.selfplay.games_per_job == 1:

    rule selfplay:
        input:
            model=MODEL,
        output:
            game=GAME,
        log:
            f"{LOGS}/selfplay/gen{{generation}}/game{{game}}.log",
        wildcard_constraints:
            generation=PLANNED,
        threads: RUN.selfplay.threads
        resources:
            runtime=60,
        params:
            minigo=MINIGO,
            config=EFFECTIVE_CONFIG,
        shell:
            "{params.minigo} selfplay --config {params.config:q} --model {input.model:q}"
            " --generation {wildcards.generation:q} --game {wildcards.game:q} --out {output.game:q}"
            " > {log:q} 2>&1"

else:
    for job, games in enumerate(minigo.selfplay_jobs(RUN)):

        rule:
            name:
                minigo.selfplay_job_rule(job)
            input:
                model=MODEL,
            output:
                games=[layout.game_path(ROOT, "{generation}", i) for i in games],
            log:
                f"{LOGS}/selfplay/gen{{generation}}/job{job:04d}.log",
            wildcard_constraints:
                generation=PLANNED,
            threads: RUN.selfplay.threads
            resources:
                runtime=60,
            params:
                minigo=MINIGO,
                config=EFFECTIVE_CONFIG,
                first=games.start,
                games=len(games),
                out=GAME_PATTERN,
            shell:
                "{params.minigo} selfplay --config {params.config:q} --model {input.model:q}"
                " --generation {wildcards.generation:q} --game {params.first:q} --count {params.games:q}"
                " --out {params.out:q} > {log:q} 2>&1"


rule games_complete:
    # Depends on the generation's game files; everything downstream depends on this one small file.
    input:
        config=ancient(EFFECTIVE_CONFIG),
        games=game_files,
    output:
        marker=GAMES_COMPLETE,
    log:
        f"{LOGS}/games_complete/gen{{generation}}.log",
    wildcard_constraints:
        generation=PLANNED,
    resources:
        runtime=30,
    params:
        minigo=MINIGO,
    shell:
        "{params.minigo} games-complete --config {input.config:q}"
        " --generation {wildcards.generation:q} --out {output.marker:q} > {log:q} 2>&1"
