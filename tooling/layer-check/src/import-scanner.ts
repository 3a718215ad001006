// Finds the module specifiers a TypeScript or JavaScript file imports. Owns: a
// small tokenizer (comments dropped, strings, template literals and regular
// expressions read as whole tokens, so text inside them never looks like an
// import) and the import forms on top of it. Does not own: what a specifier
// may be (layer-check.ts decides that). Not a full parser: JSX is not read.

export type ImportKind = "import" | "side-effect" | "re-export" | "dynamic" | "require";

export type ImportSite = {
  readonly specifier: string;
  /** 1-based line of the specifier string itself. */
  readonly line: number;
  readonly kind: ImportKind;
};

type TokenType = "name" | "string" | "template" | "punct" | "number" | "regex";

type Token = { readonly type: TokenType; readonly value: string; readonly line: number };

// After these words a `/` starts a regular expression, not a division.
const KEYWORDS_BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

const IDENTIFIER_START = /[A-Za-z_$#\u0080-\uffff]/;
const IDENTIFIER_PART = /[\w$\u0080-\uffff]/;

/** The index of the next newline at or after `from`, or the end of the source. */
function endOfLine(source: string, from: number): number {
  const end = source.indexOf("\n", from);
  return end === -1 ? source.length : end;
}

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  // One entry per open `${` of a template literal: how many `{` are open inside it.
  const templateBraceDepths: number[] = [];
  // A hashbang line is not JavaScript; skip it (its newline is counted below).
  let index = source.startsWith("#!") ? endOfLine(source, 0) : 0;
  let line = 1;

  const push = (type: TokenType, value: string, tokenLine: number): void => {
    tokens.push({ type, value, line: tokenLine });
  };

  // Reads template text from `index` up to the closing backtick or the next `${`.
  const readTemplateText = (startLine: number, complete: boolean): void => {
    let text = "";
    while (index < source.length) {
      const char = source[index];
      if (char === "\\") {
        text += source.slice(index, index + 2);
        if (source[index + 1] === "\n") line += 1;
        index += 2;
        continue;
      }
      if (char === "`") {
        index += 1;
        push(complete ? "string" : "template", text, startLine);
        return;
      }
      if (char === "$" && source[index + 1] === "{") {
        index += 2;
        templateBraceDepths.push(0);
        push("template", text, startLine);
        return;
      }
      if (char === "\n") line += 1;
      text += char;
      index += 1;
    }
    push("template", text, startLine);
  };

  const regexAllowedHere = (): boolean => {
    const previous = tokens.at(-1);
    if (previous === undefined) return true;
    if (previous.type === "punct")
      return previous.value !== ")" && previous.value !== "]" && previous.value !== "}";
    if (previous.type === "name") return KEYWORDS_BEFORE_EXPRESSION.has(previous.value);
    // A template head or middle (`...${`) is followed by an expression.
    return previous.type === "template";
  };

  while (index < source.length) {
    const char = source[index] ?? "";
    const next = source[index + 1];

    if (char === "\n") {
      line += 1;
      index += 1;
    } else if (/\s/.test(char)) {
      index += 1;
    } else if (char === "/" && next === "/") {
      index = endOfLine(source, index);
    } else if (char === "/" && next === "*") {
      const end = source.indexOf("*/", index + 2);
      const stop = end === -1 ? source.length : end + 2;
      for (let at = index; at < stop; at += 1) if (source[at] === "\n") line += 1;
      index = stop;
    } else if (char === '"' || char === "'") {
      const startLine = line;
      let text = "";
      index += 1;
      while (index < source.length && source[index] !== char && source[index] !== "\n") {
        if (source[index] === "\\") {
          if (source[index + 1] === "\n") line += 1;
          text += source.slice(index, index + 2);
          index += 2;
        } else {
          text += source[index];
          index += 1;
        }
      }
      if (source[index] === char) index += 1;
      push("string", text, startLine);
    } else if (char === "`") {
      index += 1;
      readTemplateText(line, true);
    } else if (char === "}" && templateBraceDepths.length > 0 && templateBraceDepths.at(-1) === 0) {
      templateBraceDepths.pop();
      index += 1;
      readTemplateText(line, false);
    } else if (char === "/" && regexAllowedHere()) {
      const startLine = line;
      const start = index;
      let inClass = false;
      index += 1;
      while (index < source.length && source[index] !== "\n") {
        const at = source[index];
        if (at === "\\") index += 1;
        else if (at === "[") inClass = true;
        else if (at === "]") inClass = false;
        else if (at === "/" && !inClass) break;
        index += 1;
      }
      index += 1;
      while (index < source.length && IDENTIFIER_PART.test(source[index] ?? "")) index += 1;
      push("regex", source.slice(start, index), startLine);
    } else if (IDENTIFIER_START.test(char)) {
      const start = index;
      index += 1;
      while (index < source.length && IDENTIFIER_PART.test(source[index] ?? "")) index += 1;
      push("name", source.slice(start, index), line);
    } else if (/[0-9]/.test(char)) {
      const start = index;
      while (index < source.length && /[\w.]/.test(source[index] ?? "")) index += 1;
      push("number", source.slice(start, index), line);
    } else {
      const depth = templateBraceDepths.length - 1;
      const openBraces = templateBraceDepths[depth];
      if (openBraces !== undefined && char === "{") templateBraceDepths[depth] = openBraces + 1;
      if (openBraces !== undefined && char === "}") templateBraceDepths[depth] = openBraces - 1;
      push("punct", char, line);
      index += 1;
    }
  }
  return tokens;
}

function isPunct(token: Token | undefined, value: string): boolean {
  return token?.type === "punct" && token.value === value;
}

function isName(token: Token | undefined, value: string): boolean {
  return token?.type === "name" && token.value === value;
}

/**
 * The index of the specifier in `import <clause> from "m"` or
 * `export <clause> from "m"`, scanning from the first token of the clause, or
 * -1 when the statement has no `from` (`export { a };`, `import x = ...`).
 */
function findFromSpecifier(tokens: readonly Token[], start: number): number {
  let braceDepth = 0;
  for (let index = start; index < tokens.length; index += 1) {
    const token = tokens[index];
    if (token === undefined) break;
    if (braceDepth === 0 && isName(token, "from") && tokens[index + 1]?.type === "string") return index + 1;
    if (isPunct(token, "{")) {
      braceDepth += 1;
    } else if (isPunct(token, "}")) {
      if (braceDepth === 0) return -1;
      braceDepth -= 1;
    } else if (token.type === "name") {
      // After a closed `{ ... }` only `from` may follow; anything else is the next statement.
      if (braceDepth === 0 && isPunct(tokens[index - 1], "}")) return -1;
    } else if (!isPunct(token, ",") && !isPunct(token, "*") && !(token.type === "string" && braceDepth > 0)) {
      return -1;
    }
  }
  return -1;
}

export function findImports(source: string): ImportSite[] {
  const tokens = tokenize(source);
  const sites: ImportSite[] = [];
  const record = (token: Token | undefined, kind: ImportKind): void => {
    if (token?.type === "string") sites.push({ specifier: token.value, line: token.line, kind });
  };

  tokens.forEach((token, index) => {
    if (token.type !== "name" || isPunct(tokens[index - 1], ".")) return;
    const next = tokens[index + 1];
    if (token.value === "import") {
      if (isPunct(next, "(")) {
        record(tokens[index + 2], "dynamic");
      } else if (next?.type === "string") {
        record(next, "side-effect");
      } else if (!isPunct(next, ".")) {
        const specifierIndex = findFromSpecifier(tokens, index + 1);
        if (specifierIndex !== -1) record(tokens[specifierIndex], "import");
      }
    } else if (token.value === "export") {
      const exportsFromModule =
        isPunct(next, "*") ||
        isPunct(next, "{") ||
        (isName(next, "type") && (isPunct(tokens[index + 2], "{") || isPunct(tokens[index + 2], "*")));
      if (exportsFromModule) {
        const specifierIndex = findFromSpecifier(tokens, index + 1);
        if (specifierIndex !== -1) record(tokens[specifierIndex], "re-export");
      }
    } else if (token.value === "require" && isPunct(next, "(") && isPunct(tokens[index + 3], ")")) {
      record(tokens[index + 2], "require");
    }
  });
  return sites;
}
