# Evaluation: the new model against each configured opponent, and its rating on the fixed Elo ladder of the
# board size when there is one (both off the critical path). They run at the lowest CPU priority (nice 19):
# on a shared machine they take only the time that self-play and training leave, and profiles/local counts
# them against no core (set-threads 0) and at most `evaluations` at once; each records its own CPU seconds.


rule evaluate:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        model=MODEL,
        opponent=opponent_model,
    output:
        result=EVAL,
    log:
        layout.eval_log_path(ROOT, "{generation}", "{opponent}"),
    wildcard_constraints:
        generation=EVALUATED,
        opponent=opponent_slugs(),
    resources:
        runtime=60,
        evaluations=1,
    params:
        minigo=MINIGO,
        spec=opponent_spec,
        options=evaluate_options,
    shell:
        "nice -n 19 {params.minigo} evaluate --config {input.config:q} --generation {wildcards.generation:q}"
        " --opponent {params.spec:q} {params.options:q} --out {output.result:q} > {log:q} 2>&1"


# The last generation's matches at equal time per move (`evaluate.final_equal_time`): the model searches,
# each move, the opponent's mean time per move measured on this machine just before the match (`minigo
# evaluate --equal-time`). Beside the fixed-readout matches, which stay for comparability; unlike them these
# games depend on the machine's speed and load (the file says `"reproducible": false`).
rule evaluate_equal_time:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        model=MODEL,
        opponent=opponent_model,
    output:
        result=EQUAL_TIME_EVAL,
    log:
        layout.eval_log_path(
            ROOT, "{generation}", "{opponent}" + layout.EQUAL_TIME_SUFFIX
        ),
    wildcard_constraints:
        generation=EVALUATED,
        opponent=equal_time_slugs(),
    resources:
        runtime=60,
        evaluations=1,
    params:
        minigo=MINIGO,
        spec=opponent_spec,
        options=equal_time_options,
    shell:
        "nice -n 19 {params.minigo} evaluate --config {input.config:q} --generation {wildcards.generation:q}"
        " --opponent {params.spec:q} {params.options:q} --out {output.result:q} > {log:q} 2>&1"


# The fixed-scale rating starts where the previous evaluated generation's stood (a chain: reruns play the
# same games).
rule ladder_rating:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        model=MODEL,
        start=ladder_start,
    output:
        rating=LADDER_RATING,
    log:
        layout.ladder_log_path(ROOT, "{generation}"),
    wildcard_constraints:
        generation=EVALUATED,
    resources:
        runtime=120,
        evaluations=1,
    params:
        minigo=MINIGO,
        options=ladder_options,
    shell:
        "nice -n 19 {params.minigo} ladder rate {params.options:q} --config {input.config:q}"
        " --out {output.rating:q} > {log:q} 2>&1"


# The first rating: `evaluate.ladder_first_games` games as soon as the model exists, at nice 5 (a share of a
# core beside the loop, not what nice 19 leaves), counted against `first_ratings` only, so it waits neither
# for the niced evaluations nor for the full rating above; the live line and `minigo status` show it until
# the full one is written. It chains on the previous first rating (reruns play the same games).
rule ladder_first_rating:
    input:
        config=ancient(EFFECTIVE_CONFIG),
        model=MODEL,
        start=first_rating_start,
    output:
        rating=FIRST_RATING,
    log:
        layout.ladder_first_log_path(ROOT, "{generation}"),
    wildcard_constraints:
        generation=EVALUATED,
    priority: 20
    resources:
        runtime=30,
        first_ratings=1,
    params:
        minigo=MINIGO,
        options=first_rating_options,
    shell:
        "nice -n 5 {params.minigo} ladder rate {params.options:q} --config {input.config:q}"
        " --out {output.rating:q} > {log:q} 2>&1"
