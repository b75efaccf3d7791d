# Self-play: one job per game, one game file each; then one marker per generation that verifies them.
# The self-play rule is the one with thousands of jobs per generation: it keeps its inputs and params to
# constants (the config path is a plain string: the model input already orders it after the config).


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
