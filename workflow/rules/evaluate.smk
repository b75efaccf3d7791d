# Evaluation: the new model against each configured opponent (off the critical path).


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
    params:
        minigo=MINIGO,
        spec=opponent_spec,
        options=evaluate_options,
    shell:
        "{params.minigo} evaluate --config {input.config:q} --generation {wildcards.generation:q}"
        " --opponent {params.spec:q} {params.options:q} --out {output.result:q} > {log:q} 2>&1"
