//! The function name in a `code.generate.{language}.function` signature.
//!
//! Signatures come in each language's own syntax (`def add(a, b) -> int`,
//! `func (c *Calc) Add(x int) int`, `pub fn add<T>(x: T) -> T`, `fun add(a: Int): Int`…),
//! usually without a body, so they rarely parse on their own. The name is found on the
//! token stream: the identifier right before the first `(` that is not a keyword (skipping a
//! generic parameter list `<…>`); failing that, the identifier after a defining keyword
//! (`def add a, b` in Ruby); failing that, a signature that is a bare identifier.

/// Words that precede a `(` without naming the function.
const NOT_NAMES: &[&str] = &[
    "func",
    "function",
    "fn",
    "def",
    "fun",
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "new",
    "typeof",
    "sizeof",
    "await",
    "async",
    "static",
    "public",
    "private",
    "protected",
];

/// Words after which the next identifier names the definition.
const DEFINING: &[&str] = &[
    "def", "fn", "func", "fun", "function", "const", "let", "var",
];

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Punct(char),
}

fn tokens(signature: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut rest = signature;
    while let Some(first) = rest.chars().next() {
        if first.is_alphabetic() || first == '_' || first == '$' {
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    !(c.is_alphanumeric() || c == '_' || c == '$' || c == '?' || c == '!')
                })
                .map_or(rest.len(), |(index, _)| index);
            let (word, tail) = rest.split_at(end);
            // Ruby's `empty?`/`save!` keep their suffix; a `$` prefix (PHP variables) does not name.
            tokens.push(Token::Word(word));
            rest = tail;
        } else {
            if !first.is_whitespace() {
                tokens.push(Token::Punct(first));
            }
            rest = &rest[first.len_utf8()..];
        }
    }
    tokens
}

/// The name of the function a signature declares, if one can be found.
pub(crate) fn function_name(signature: &str) -> Option<String> {
    let tokens = tokens(signature);
    for (index, token) in tokens.iter().enumerate() {
        if *token != Token::Punct('(') {
            continue;
        }
        let mut back = index;
        // Skip a generic parameter list right before the parenthesis.
        if back > 0 && tokens[back - 1] == Token::Punct('>') {
            let mut depth = 0usize;
            while back > 0 {
                back -= 1;
                match tokens[back] {
                    Token::Punct('>') => depth += 1,
                    Token::Punct('<') => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        if back > 0
            && let Token::Word(word) = tokens[back - 1]
            && !NOT_NAMES.contains(&word)
            && !word.starts_with('$')
        {
            return Some(word.to_owned());
        }
    }
    for pair in tokens.windows(2) {
        if let (Token::Word(keyword), Token::Word(name)) = (&pair[0], &pair[1])
            && DEFINING.contains(keyword)
        {
            return Some((*name).to_owned());
        }
    }
    match tokens.as_slice() {
        [Token::Word(name)] => Some((*name).to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::function_name;

    #[test]
    fn names_in_every_language_style() {
        let cases = [
            ("def add(a: int, b: int) -> int:", "add"),
            ("function add(a, b)", "add"),
            ("function add(a: number, b: number): number", "add"),
            ("func Add(a, b int) int", "Add"),
            ("func (c *Calc) Add(a int) int", "Add"),
            ("pub fn add<T: Into<i64>>(a: T, b: T) -> i64", "add"),
            ("public static int add(int a, int b)", "add"),
            ("public static <T> List<T> wrap(T item)", "wrap"),
            ("def add(a, b)", "add"),
            ("def empty?(list)", "empty?"),
            ("def add a, b", "add"),
            ("function add(int $a, int $b): int", "add"),
            ("public int Add(int a, int b)", "Add"),
            ("func add(_ a: Int, _ b: Int) -> Int", "add"),
            ("fun <T> first(items: List<T>): T", "first"),
            ("const add = (a, b) => a + b", "add"),
            ("add", "add"),
        ];
        for (signature, name) in cases {
            assert_eq!(
                function_name(signature).as_deref(),
                Some(name),
                "{signature}"
            );
        }
        assert_eq!(function_name("(a, b) -> c"), None);
        assert_eq!(function_name(""), None);
    }
}
