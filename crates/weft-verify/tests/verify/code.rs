//! `code.*` rows in all eleven languages: real parses, signatures, symbol references,
//! reviews, translations, and the sandbox.

use serde_json::json;

use crate::support::*;

/// One language's fixtures.
#[cfg_attr(not(feature = "code-parsers"), allow(dead_code))]
struct Fixture {
    language: &'static str,
    /// Valid code defining `name`.
    valid: &'static str,
    /// Code with a syntax error, and the `line:` where the first error is reported.
    invalid: &'static str,
    error_line: &'static str,
    /// The signature of the function `valid` defines.
    signature: &'static str,
    /// Tests that use a top-level symbol of `valid`.
    tests: &'static str,
    /// Tests that use nothing from `valid`.
    unrelated_tests: &'static str,
}

const FIXTURES: [Fixture; 11] = [
    Fixture {
        language: "python",
        valid: "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n",
        invalid: "def add(a, b)\n    return a + b\n",
        error_line: "1:",
        signature: "def add(a: int, b: int) -> int",
        tests: "import unittest\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n",
        unrelated_tests: "def test_math():\n    assert 1 + 2 == 3\n",
    },
    Fixture {
        language: "javascript",
        valid: "function add(a, b) {\n  return a + b;\n}\nconsole.log(add(1, 2));\n",
        invalid: "function add(a, b) {\n  return a + ;\n}\n",
        error_line: "2:",
        signature: "function add(a, b)",
        tests: "test('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n",
        unrelated_tests: "test('math', () => {\n  expect(1 + 2).toBe(3);\n});\n",
    },
    Fixture {
        language: "typescript",
        valid: "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
        invalid: "export function add(a: number, b: number): number {\n  let total: = a + b;\n  return total;\n}\n",
        error_line: "2:",
        signature: "function add(a: number, b: number): number",
        tests: "import { add } from './add';\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n",
        unrelated_tests: "test('math', () => {\n  expect(1 + 2).toBe(3);\n});\n",
    },
    Fixture {
        language: "go",
        valid: "package main\n\nimport \"fmt\"\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n\tfmt.Println(Add(1, 2))\n}\n",
        invalid: "package main\n\nfunc Add(a, b int) int {\n\treturn a + \n}\n",
        error_line: "",
        signature: "func Add(a, b int) int",
        tests: "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad sum\")\n\t}\n}\n",
        unrelated_tests: "package main\n\nimport \"testing\"\n\nfunc TestMath(t *testing.T) {\n\tif 1+2 != 3 {\n\t\tt.Fatal(\"bad sum\")\n\t}\n}\n",
    },
    Fixture {
        language: "rust",
        valid: "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    println!(\"{}\", add(1, 2));\n}\n",
        invalid: "fn add(a: i32, b: i32) -> i32 {\n    a +\n}\n",
        error_line: "",
        signature: "pub fn add(a: i32, b: i32) -> i32",
        tests: "#[test]\nfn adds() {\n    assert_eq!(add(1, 2), 3);\n}\n",
        unrelated_tests: "#[test]\nfn math() {\n    assert_eq!(1 + 2, 3);\n}\n",
    },
    Fixture {
        language: "java",
        valid: "public class Calc {\n    public static int add(int a, int b) {\n        return a + b;\n    }\n}\n",
        invalid: "public class Calc {\n    public static int add(int a, int b) {\n        return a + b\n    }\n}\n",
        error_line: "3:",
        signature: "public static int add(int a, int b)",
        tests: "class CalcTest {\n    @Test\n    void adds() {\n        assertEquals(3, Calc.add(1, 2));\n    }\n}\n",
        unrelated_tests: "class MathTest {\n    @Test\n    void adds() {\n        assertEquals(3, 1 + 2);\n    }\n}\n",
    },
    Fixture {
        language: "ruby",
        valid: "def add(a, b)\n  a + b\nend\n\nputs add(1, 2)\n",
        invalid: "def add(a, b)\n  a + b\n",
        error_line: "",
        signature: "def add(a, b)",
        tests: "require 'minitest/autorun'\n\nclass TestAdd < Minitest::Test\n  def test_add\n    assert_equal 3, add(1, 2)\n  end\nend\n",
        unrelated_tests: "require 'minitest/autorun'\n\nclass TestMath < Minitest::Test\n  def test_sum\n    assert_equal 3, 1 + 2\n  end\nend\n",
    },
    Fixture {
        language: "php",
        valid: "<?php\nfunction add($a, $b) {\n    return $a + $b;\n}\necho add(1, 2);\n",
        invalid: "<?php\nfunction add($a, $b) {\n    return $a + ;\n}\n",
        error_line: "3:",
        signature: "function add(int $a, int $b): int",
        tests: "<?php\nuse PHPUnit\\Framework\\TestCase;\n\nclass AddTest extends TestCase {\n    public function testAdd(): void {\n        $this->assertSame(3, add(1, 2));\n    }\n}\n",
        unrelated_tests: "<?php\nuse PHPUnit\\Framework\\TestCase;\n\nclass MathTest extends TestCase {\n    public function testSum(): void {\n        $this->assertSame(3, 1 + 2);\n    }\n}\n",
    },
    Fixture {
        language: "csharp",
        valid: "public class Calc\n{\n    public static int Add(int a, int b)\n    {\n        return a + b;\n    }\n}\n",
        invalid: "public class Calc\n{\n    public static int Add(int a, int b)\n    {\n        return a + ;\n    }\n}\n",
        error_line: "5:",
        signature: "public static int Add(int a, int b)",
        tests: "public class CalcTests\n{\n    [Fact]\n    public void Adds()\n    {\n        Assert.Equal(3, Calc.Add(1, 2));\n    }\n}\n",
        unrelated_tests: "public class MathTests\n{\n    [Fact]\n    public void Adds()\n    {\n        Assert.Equal(3, 1 + 2);\n    }\n}\n",
    },
    Fixture {
        language: "swift",
        valid: "func add(_ a: Int, _ b: Int) -> Int {\n    return a + b\n}\n\nprint(add(1, 2))\n",
        invalid: "func add(_ a: Int, _ b: Int) -> Int {\n    return a +\n",
        error_line: "",
        signature: "func add(_ a: Int, _ b: Int) -> Int",
        tests: "import XCTest\n\nfinal class AddTests: XCTestCase {\n    func testAdd() {\n        XCTAssertEqual(add(1, 2), 3)\n    }\n}\n",
        unrelated_tests: "import XCTest\n\nfinal class MathTests: XCTestCase {\n    func testSum() {\n        XCTAssertEqual(1 + 2, 3)\n    }\n}\n",
    },
    Fixture {
        language: "kotlin",
        valid: "fun add(a: Int, b: Int): Int {\n    return a + b\n}\n\nfun main() {\n    println(add(1, 2))\n}\n",
        invalid: "fun add(a: Int, b: Int): Int {\n    return a +\n}\n",
        error_line: "",
        signature: "fun add(a: Int, b: Int): Int",
        tests: "import kotlin.test.Test\nimport kotlin.test.assertEquals\n\nclass AddTest {\n    @Test\n    fun adds() {\n        assertEquals(3, add(1, 2))\n    }\n}\n",
        unrelated_tests: "import kotlin.test.Test\nimport kotlin.test.assertEquals\n\nclass MathTest {\n    @Test\n    fun sums() {\n        assertEquals(3, 1 + 2)\n    }\n}\n",
    },
];

#[cfg(feature = "code-parsers")]
#[test]
fn scripts_parse_in_every_language() {
    for fixture in &FIXTURES {
        let bindings = [("language", fixture.language)];
        let input = json!({"task": "add two numbers"});
        let report = run(
            "code.generate.{language}.script",
            &bindings,
            input.clone(),
            json!({"code": fixture.valid, "deps": []}),
        );
        assert_passes(&report);
        let report = run(
            "code.generate.{language}.script",
            &bindings,
            input.clone(),
            json!({"code": fixture.invalid}),
        );
        assert_fails(&report, &["code_parses"]);
        let found = detail(&report, "code_parses");
        assert!(
            found.contains(fixture.error_line) && found.contains(fixture.language),
            "{}: {found}",
            fixture.language
        );
        let report = run(
            "code.generate.{language}.script",
            &bindings,
            input.clone(),
            json!({"code": "  \n"}),
        );
        assert_fails(&report, &["code_nonempty", "code_parses"]);
        let report = run(
            "code.generate.{language}.script",
            &bindings,
            input,
            json!({"code": fixture.valid, "deps": [1]}),
        );
        assert_fails(&report, &["output_shape"]);
    }
}

#[cfg(feature = "code-parsers")]
#[test]
fn prose_is_not_code() {
    for fixture in &FIXTURES {
        let report = run(
            "code.translate.{src}.{tgt}",
            &[("src", "python"), ("tgt", fixture.language)],
            json!({"code": "print(1)"}),
            json!({"code": "Sure! Here is the translated code: it adds two numbers, then (prints) the result."}),
        );
        assert_fails(&report, &["code_parses"]);
    }
}

#[cfg(feature = "code-parsers")]
#[test]
fn code_in_another_language_does_not_parse_as_the_target() {
    let python = FIXTURES[0].valid;
    for target in [
        "javascript",
        "go",
        "rust",
        "java",
        "csharp",
        "php",
        "kotlin",
        "swift",
    ] {
        let report = run(
            "code.translate.{src}.{tgt}",
            &[("src", "ruby"), ("tgt", target)],
            json!({"code": "puts 1"}),
            json!({"code": python}),
        );
        assert_fails(&report, &["code_parses"]);
    }
    for fixture in &FIXTURES {
        let report = run(
            "code.translate.{src}.{tgt}",
            &[("src", "python"), ("tgt", fixture.language)],
            json!({"code": python}),
            json!({"code": fixture.valid}),
        );
        assert_passes(&report);
    }
}

#[cfg(feature = "code-parsers")]
#[test]
fn functions_match_their_signature() {
    for fixture in &FIXTURES {
        let bindings = [("language", fixture.language)];
        let input = json!({"signature": fixture.signature, "behavior": "adds"});
        let report = run(
            "code.generate.{language}.function",
            &bindings,
            input,
            json!({"code": fixture.valid}),
        );
        assert_passes(&report);
        let renamed = json!({"signature": fixture.signature.replacen("add", "sum", 1).replacen("Add", "Sum", 1), "behavior": "adds"});
        let report = run(
            "code.generate.{language}.function",
            &bindings,
            renamed,
            json!({"code": fixture.valid}),
        );
        assert_fails(&report, &["matches_signature"]);
        assert!(
            detail(&report, "matches_signature").contains("is not defined"),
            "{}",
            fixture.language
        );
    }
}

#[cfg(feature = "code-parsers")]
#[test]
fn tests_reference_the_input_code() {
    for fixture in &FIXTURES {
        let bindings = [("language", fixture.language)];
        let input = json!({"code": fixture.valid, "test_framework": "default"});
        let report = run(
            "code.test.{language}",
            &bindings,
            input.clone(),
            json!({"tests": fixture.tests}),
        );
        assert_passes(&report);
        let report = run(
            "code.test.{language}",
            &bindings,
            input.clone(),
            json!({"tests": fixture.unrelated_tests}),
        );
        assert_fails(&report, &["references_input_symbols"]);
        let report = run(
            "code.test.{language}",
            &bindings,
            input,
            json!({"tests": fixture.invalid}),
        );
        assert_fails(&report, &["tests_parse", "references_input_symbols"]);
        assert_eq!(
            detail(&report, "references_input_symbols"),
            "not checked: `tests_parse` failed"
        );
    }
}

#[cfg(feature = "code-parsers")]
#[test]
fn nested_definitions_are_not_top_level_symbols() {
    // `helper` is nested in `outer`; tests using only `helper` reference no top-level symbol.
    let input = json!({"code": "def outer():\n    def helper():\n        return 1\n    return helper()\n", "test_framework": "pytest"});
    let report = run(
        "code.test.{language}",
        &[("language", "python")],
        input,
        json!({"tests": "def test_helper():\n    assert helper() == 1\n"}),
    );
    assert_fails(&report, &["references_input_symbols"]);
    assert!(detail(&report, "references_input_symbols").contains("`outer`"));
}

#[cfg(not(feature = "code-parsers"))]
#[test]
fn without_parsers_parse_checks_fail_and_say_why() {
    let report = run(
        "code.generate.{language}.script",
        &[("language", "python")],
        json!({"task": "t"}),
        json!({"code": FIXTURES[0].valid}),
    );
    assert_fails(&report, &["code_parses"]);
    assert!(detail(&report, "code_parses").contains("without the `code-parsers` feature"));
}

#[test]
fn code_language_bindings_are_checked() {
    let error = try_run(
        &options(),
        "code.generate.{language}.script",
        &[("language", "cobol")],
        json!({"task": "t"}),
        json!({"code": "x"}),
    )
    .unwrap_err();
    assert_eq!(error.code(), "invalid_binding");
}

#[test]
fn reviews() {
    let row = "code.review.{language}";
    let bindings = [("language", "python")];
    let input = json!({"code": "a = 1\nb = 2\nprint(a + b)\n"});
    assert_passes(&run(row, &bindings, input.clone(), json!({"findings": []})));
    let good = json!({"findings": [
        {"severity": "low", "line": 3, "message": "print in library code"},
        {"severity": "warning", "line": 1, "message": "single-letter name"}
    ]});
    assert_passes(&run(row, &bindings, input.clone(), good));
    let bad_severity = json!({"findings": [{"severity": "meh", "line": 1, "message": "m"}]});
    assert_fails(
        &run(row, &bindings, input.clone(), bad_severity),
        &["findings_well_formed", "finding_lines_in_code"],
    );
    let zero_line = json!({"findings": [{"severity": "high", "line": 0, "message": "m"}]});
    assert_fails(
        &run(row, &bindings, input.clone(), zero_line),
        &["findings_well_formed", "finding_lines_in_code"],
    );
    let beyond = json!({"findings": [{"severity": "high", "line": 4, "message": "m"}]});
    assert_fails(
        &run(row, &bindings, input.clone(), beyond),
        &["finding_lines_in_code"],
    );
    let not_array = json!({"findings": {"severity": "high"}});
    assert_fails(
        &run(row, &bindings, input, not_array),
        &[
            "output_shape",
            "findings_well_formed",
            "finding_lines_in_code",
        ],
    );
}

const SANDBOX: &str = "code.execute.sandboxed";

fn run_result(exit_code: i64, duration_ms: i64) -> serde_json::Value {
    json!({"stdout": "3\n", "stderr": "", "exit_code": exit_code, "duration_ms": duration_ms, "truncated": false})
}

#[test]
fn sandbox_results() {
    let input = json!({"code": "print(1 + 2)"});
    assert_passes(&run(SANDBOX, &[], input.clone(), run_result(0, 40)));
    assert_passes(&run(SANDBOX, &[], input.clone(), run_result(1, 40)));
    // Default timeout 5000 ms + 500 ms grace.
    assert_passes(&run(SANDBOX, &[], input.clone(), run_result(124, 5500)));
    assert_fails(
        &run(SANDBOX, &[], input.clone(), run_result(124, 5501)),
        &["duration_within_timeout"],
    );
    // 124 long before the timeout is inconsistent; 4500 is the earliest consistent.
    assert_passes(&run(SANDBOX, &[], input.clone(), run_result(124, 4500)));
    assert_fails(
        &run(SANDBOX, &[], input.clone(), run_result(124, 4499)),
        &["timeout_exit_consistent"],
    );
    assert_fails(
        &run(SANDBOX, &[], input.clone(), run_result(2, 40)),
        &["exit_code_valid"],
    );
    assert_fails(
        &run(SANDBOX, &[], input.clone(), run_result(0, -1)),
        &["duration_within_timeout"],
    );
    // An explicit timeout.
    let short = json!({"code": "while True: pass", "timeout_ms": 1000});
    assert_passes(&run(SANDBOX, &[], short.clone(), run_result(124, 1100)));
    assert_fails(
        &run(SANDBOX, &[], short, run_result(0, 1501)),
        &["duration_within_timeout"],
    );
    let malformed = json!({"stdout": 3, "stderr": null, "exit_code": "0", "duration_ms": 1.5, "truncated": "no"});
    assert_fails(
        &run(SANDBOX, &[], input, malformed),
        &[
            "output_shape",
            "stdout_is_string",
            "stderr_is_string",
            "exit_code_valid",
            "duration_within_timeout",
            "timeout_exit_consistent",
            "truncated_is_bool",
        ],
    );
}

#[test]
fn sandbox_input_limits() {
    for (input, pointer) in [
        (json!({"code": "x", "timeout_ms": 30001}), "/timeout_ms"),
        (json!({"code": "x", "timeout_ms": 0}), "/timeout_ms"),
        (json!({"code": "x", "language": "javascript"}), "/language"),
        (json!({"timeout_ms": 10}), "/code"),
    ] {
        let error = try_run(&options(), SANDBOX, &[], input, run_result(0, 1)).unwrap_err();
        assert!(
            matches!(error, weft_verify::VerifyError::InvalidInput { pointer: ref p, .. } if p == pointer),
            "{error:?}"
        );
    }
    assert_passes(&run(
        SANDBOX,
        &[],
        json!({"code": "x", "timeout_ms": 30000, "language": "python"}),
        run_result(124, 30500),
    ));
}
