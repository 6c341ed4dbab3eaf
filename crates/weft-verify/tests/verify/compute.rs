//! `compute.*` rows: recomputed statistics, evaluated expressions, symbolic results.

use serde_json::json;

use crate::support::*;

const STATS: &str = "compute.statistics.{op}";

#[test]
fn statistics_are_recomputed() {
    let data = json!({"data": [2, 4, 4, 4, 5, 5, 7, 9]});
    // Population variance 4, stddev 2; median 4.5; p95 by linear interpolation:
    // rank 0.95 × 7 = 6.65 → 7 + 0.65 × (9 − 7) = 8.3.
    for (op, want, wrong) in [
        ("mean", 5.0, 5.1),
        ("median", 4.5, 4.0),
        ("variance", 4.0, 4.571_428_571_428_571),
        ("stddev", 2.0, 2.138_089_935_299_395),
        ("percentile-95", 8.3, 9.0),
    ] {
        assert_passes(&run(
            STATS,
            &[("op", op)],
            data.clone(),
            json!({"result": want}),
        ));
        let report = run(STATS, &[("op", op)], data.clone(), json!({"result": wrong}));
        assert_fails(&report, &["result_matches"]);
    }
    // Odd count median, a single value, negative numbers.
    assert_passes(&run(
        STATS,
        &[("op", "median")],
        json!({"data": [3, -1, 2]}),
        json!({"result": 2}),
    ));
    assert_passes(&run(
        STATS,
        &[("op", "percentile-95")],
        json!({"data": [7]}),
        json!({"result": 7}),
    ));
    assert_passes(&run(
        STATS,
        &[("op", "stddev")],
        json!({"data": [7]}),
        json!({"result": 0}),
    ));
}

#[test]
fn sample_variance_is_a_knob() {
    let options = weft_verify::VerifyOptions {
        sample_variance: true,
        ..options()
    };
    let data = json!({"data": [2, 4, 4, 4, 5, 5, 7, 9]});
    let report = run_with(
        &options,
        STATS,
        &[("op", "variance")],
        data,
        json!({"result": 4.571_428_571_428_571}),
    );
    assert_passes(&report);
}

#[test]
fn statistics_results_must_be_numbers() {
    let data = json!({"data": [1, 2]});
    assert_fails(
        &run(
            STATS,
            &[("op", "mean")],
            data.clone(),
            json!({"result": "NaN"}),
        ),
        &["output_shape", "result_is_number", "result_matches"],
    );
    assert_fails(
        &run(STATS, &[("op", "mean")], data, json!({"value": 1.5})),
        &["output_shape", "result_is_number", "result_matches"],
    );
    let error = try_run(
        &options(),
        STATS,
        &[("op", "mean")],
        json!({"data": []}),
        json!({"result": 0}),
    )
    .unwrap_err();
    assert_eq!(error.code(), "invalid_input");
    let error = try_run(
        &options(),
        STATS,
        &[("op", "mode")],
        json!({"data": [1]}),
        json!({"result": 1}),
    )
    .unwrap_err();
    assert_eq!(error.code(), "invalid_binding");
}

#[test]
fn numeric_expressions_are_evaluated() {
    let row = "compute.math.numeric";
    let input = json!({"expression": "sqrt(x^2 + y^2) * PI", "vars": {"x": 3, "y": 4}});
    assert_passes(&run(
        row,
        &[],
        input.clone(),
        json!({"result": 15.707_963_267_948_966}),
    ));
    assert_fails(
        &run(row, &[], input.clone(), json!({"result": 15.7})),
        &["result_matches"],
    );
    let precise = json!({"expression": "2/3", "precision": 2});
    assert_passes(&run(row, &[], precise.clone(), json!({"result": 0.67})));
    let report = run(row, &[], precise.clone(), json!({"result": 0.6667}));
    assert_fails(&report, &["precision_honored"]);
    assert_fails(
        &run(row, &[], precise.clone(), json!({"result": 0.7})),
        &["result_matches"],
    );
    assert_fails(
        &run(row, &[], precise, json!({"result": 0.66})),
        &["result_matches"],
    );
    let integer = json!({"expression": "10 / 4", "precision": 0});
    assert_passes(&run(row, &[], integer.clone(), json!({"result": 3})));
    assert_fails(
        &run(row, &[], integer, json!({"result": 2.5})),
        &["precision_honored"],
    );
    assert_fails(
        &run(row, &[], input, json!({"result": "15.7"})),
        &[
            "output_shape",
            "result_is_number",
            "result_matches",
            "precision_honored",
        ],
    );
}

#[test]
fn numeric_input_errors_point_at_the_problem() {
    let row = "compute.math.numeric";
    for (input, pointer) in [
        (json!({"expression": "x + 1"}), "/vars"),
        (json!({"expression": "1 +* 2"}), "/expression"),
        (json!({"expression": "1", "precision": 16}), "/precision"),
        (json!({"expression": "x", "vars": {"x": "3"}}), "/vars/x"),
        (
            json!({"expression": "(".repeat(65) + "1" + &")".repeat(65)}),
            "/expression",
        ),
    ] {
        let error = try_run(&options(), row, &[], input, json!({"result": 1})).unwrap_err();
        assert!(
            matches!(error, weft_verify::VerifyError::InvalidInput { pointer: ref p, .. } if p == pointer),
            "{error:?}"
        );
    }
}

#[test]
fn symbolic_results_must_parse() {
    let row = "compute.math.symbolic";
    let input = json!({"expression": "d/dx x^3"});
    assert_passes(&run(
        row,
        &[],
        input.clone(),
        json!({"result": "3*x^2", "latex": "3x^{2}"}),
    ));
    assert_passes(&run(
        row,
        &[],
        input.clone(),
        json!({"result": "sin(x)/cos(x) + E"}),
    ));
    for bad in ["3*x^^2", "", "3x^2 +", "(x"] {
        assert_fails(
            &run(row, &[], input.clone(), json!({"result": bad})),
            &["result_parses"],
        );
    }
    assert_fails(
        &run(row, &[], input, json!({"result": 3})),
        &["output_shape", "result_parses"],
    );
}
