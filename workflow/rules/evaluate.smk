# Evaluation: the new model against each configured opponent, and its rating on the fixed Elo ladder of the
# board size when there is one (both off the critical path, beside the loop). Each runs at the nice level
# that keeps it `evaluate.share` of a core it shares with a loop job (EVAL_NICE: nice 5 for a quarter), a
# share the scheduler holds whatever the loop does, so the ratings keep up with the loop instead of piling
# up at its end; profiles/local counts them against no core (set-threads 0) and at most `evaluations` at
# once. The last generation's jobs hold no `evaluations` slot and run at nice 0 (eval_nice,
# evaluation_slots): the run's end waits for them alone. Each records its own CPU seconds.


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
        evaluations=evaluation_slots,
    params:
        minigo=MINIGO,
        nice=eval_nice,
        spec=opponent_spec,
        options=evaluate_options,
    shell:
        "nice -n {params.nice:q} {params.minigo} evaluate --config {input.config:q} --generation {wildcards.generation:q}"
        " --opponent {params.spec:q} {params.options:q} --out {output.result:q} > {log:q} 2>&1"


# The last generation's matches at equal time per move (`evaluate.final_equal_time`): the model searches,
# each move, the opponent's mean CPU time per move measured on this machine just before the match, in its own
# CPU time, which the end's load does not stretch (`minigo evaluate --equal-time`). Beside the fixed-readout matches, which stay for comparability; unlike them these
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
    priority: 5
    resources:
        runtime=60,
        evaluations=evaluation_slots,
    params:
        minigo=MINIGO,
        nice=eval_nice,
        spec=opponent_spec,
        options=equal_time_options,
    shell:
        "nice -n {params.nice:q} {params.minigo} evaluate --config {input.config:q} --generation {wildcards.generation:q}"
        " --opponent {params.spec:q} {params.options:q} --out {output.result:q} > {log:q} 2>&1"


# The fixed-scale rating starts where its own first rating stands (`ladder_first_games` games of the same
# model), else at the ladder's middle: never from another generation's result, so ratings do not wait for
# one another. Before the last generation it narrows to `evaluate.ladder_half_width_mid`. It goes before the
# matches (priority 10; the equal-time match 5): at the run's end the last model's rating, the longest job,
# starts at once beside the matches instead of after them.
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
    priority: 10
    resources:
        runtime=120,
        evaluations=evaluation_slots,
    params:
        minigo=MINIGO,
        nice=eval_nice,
        options=ladder_options,
    shell:
        "nice -n {params.nice:q} {params.minigo} ladder rate {params.options:q} --config {input.config:q}"
        " --out {output.rating:q} > {log:q} 2>&1"


# The first rating: `evaluate.ladder_first_games` games as soon as the model exists, from the ladder's middle,
# counted against `first_ratings` only, so it waits for no evaluation; the live line and `minigo status` show
# it until the full one is written.
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
        nice=eval_nice,
        options=first_rating_options,
    shell:
        "nice -n {params.nice:q} {params.minigo} ladder rate {params.options:q} --config {input.config:q}"
        " --out {output.rating:q} > {log:q} 2>&1"
