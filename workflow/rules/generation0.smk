# The run's effective config, and generation 0: a randomly initialised model.


rule run_config:
    # Rewritten when the config changes (Snakemake's params trigger); jobs read it as ancient() input so
    # files that are already finished are kept. Delete them (or --forcerun) to redo them with a new config.
    output:
        EFFECTIVE_CONFIG,
    log:
        layout.run_config_log_path(ROOT),
    params:
        text=effective_config_text(),
    run:
        minigo.write_effective_config(output[0], params.text)


rule bootstrap:
    input:
        config=ancient(EFFECTIVE_CONFIG),
    output:
        model=MODEL,
    log:
        layout.generation_log_path(ROOT, "bootstrap", "{generation}"),
    wildcard_constraints:
        generation=BOOTSTRAPPED,
    resources:
        runtime=10,
    params:
        minigo=MINIGO,
    shell:
        "{params.minigo} bootstrap --config {input.config:q} --out {output.model:q} > {log:q} 2>&1"
