// Formatting for each dialect: examples per construct, escaping per the Telegram Bot API and Slack rules,
// and property tests — for random text every dialect's output is valid (a strict reader of the dialect
// accepts it: every special character escaped, every entity closed and properly nested) and shows the same
// visible text as the plain rendering; `formatAndSplit` chunks fit the limit after formatting.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  escapeMarkdownV2,
  formatAndSplit,
  toPlainText,
  toSlackMrkdwn,
  toTelegramHtml,
  toTelegramMarkdownV2,
} from "./format.ts";

// ---------------------------------------------------------------------------
// Strict readers of each dialect (test oracles, written from the docs, independent of the renderers).

const V2_RESERVED = "_*[]()~`>#+-=|{}.!";

/**
 * Reads Telegram MarkdownV2 as https://core.telegram.org/bots/api#markdownv2-style specifies, failing on
 * any unescaped reserved character, an unclosed or badly nested entity, a bad escape inside code or a URL.
 * Returns the visible text, with a link shown as `label (url)` unless the label is the URL.
 */
function readMarkdownV2(input: string): string {
  const stack: string[] = [];
  let visible = "";
  let label: { start: number } | undefined;
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`MarkdownV2 invalid at ${i}: ${why} in ${JSON.stringify(input)}`);
  };
  const readUntil = (terminator: string, allowedEscapes: string): string => {
    let out = "";
    while (i < input.length) {
      const c = input[i] ?? "";
      if (c === "\\") {
        const next = input[i + 1];
        if (next === undefined || !allowedEscapes.includes(next)) fail(`bad escape \\${next ?? ""}`);
        out += next;
        i += 2;
        continue;
      }
      if (input.startsWith(terminator, i)) {
        i += terminator.length;
        return out;
      }
      if (terminator === ")" && c === ")") break;
      if (terminator === "`" && c === "`") break;
      out += c;
      i++;
    }
    return fail(`unterminated ${terminator}`);
  };
  while (i < input.length) {
    const c = input[i] ?? "";
    if (c === "\\") {
      const next = input[i + 1];
      if (next === undefined) fail("trailing backslash");
      const code = next?.charCodeAt(0) ?? 0;
      if (code < 1 || code > 126) fail("escaped character outside 1..126");
      visible += next;
      i += 2;
      continue;
    }
    if (input.startsWith("```", i)) {
      i += 3;
      const newline = input.indexOf("\n", i);
      if (newline === -1) fail("pre without a newline");
      const lang = input.slice(i, newline);
      if (!/^[A-Za-z0-9_+-]*$/.test(lang)) fail(`odd pre language ${lang}`);
      i = newline + 1;
      const code = readUntil("```", "`\\");
      if (!code.endsWith("\n")) fail("pre content must end with a newline before ```");
      visible += code.slice(0, -1);
      continue;
    }
    if (c === "`") {
      i++;
      const code = readUntil("`", "`\\");
      if (code === "") fail("empty code");
      visible += code;
      continue;
    }
    if (c === "*" || c === "_" || c === "~") {
      if (c === "_" && input[i + 1] === "_") fail("__ (underline or ambiguity)");
      if (stack.includes(c)) {
        if (stack.at(-1) !== c) fail(`${c} closes across ${stack.at(-1)}`);
        stack.pop();
      } else stack.push(c);
      i++;
      continue;
    }
    if (c === "[") {
      if (stack.includes("[")) fail("nested link");
      stack.push("[");
      label = { start: visible.length };
      i++;
      continue;
    }
    if (c === "]") {
      if (stack.at(-1) !== "[" || label === undefined) fail("] without [");
      stack.pop();
      if (input[i + 1] !== "(") fail("] not followed by (");
      i += 2;
      const url = readUntil(")", ")\\");
      if (visible.slice(label?.start ?? 0) !== url) visible += ` (${url})`;
      label = undefined;
      continue;
    }
    if (V2_RESERVED.includes(c)) fail(`unescaped ${c}`);
    visible += c;
    i++;
  }
  if (stack.length > 0) fail(`unclosed ${stack.join("")}`);
  return visible;
}

function unescapeHtml(text: string): string {
  if (/&(?!(?:amp|lt|gt|quot);)/.test(text)) throw new Error(`bare & in ${JSON.stringify(text)}`);
  return text.replace(
    /&(amp|lt|gt|quot);/g,
    (_m, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"' })[name] ?? "",
  );
}

/** Reads Telegram HTML: only b/i/s/code/pre/a tags, properly nested; `<`, `>`, `&` only escaped in text. */
function readTelegramHtml(input: string): string {
  const stack: string[] = [];
  let visible = "";
  const links: { start: number; href: string }[] = [];
  const tag = /<(\/?)(b|i|s|code|pre|a)((?: (?:href|class)="[^"<>]*")?)>/y;
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (c === "<") {
      tag.lastIndex = i;
      const match = tag.exec(input);
      if (match === null) throw new Error(`bad tag at ${i} in ${JSON.stringify(input)}`);
      const [whole, closing, name = "", attributes = ""] = match;
      if (closing === "/") {
        if (stack.pop() !== name)
          throw new Error(`</${name}> closes the wrong tag in ${JSON.stringify(input)}`);
        if (name === "a") {
          const link = links.pop();
          if (link !== undefined && visible.slice(link.start) !== link.href) visible += ` (${link.href})`;
        }
      } else {
        if (name === "a") {
          const href = /href="([^"]*)"/.exec(attributes)?.[1];
          if (href === undefined) throw new Error("a without href");
          links.push({ start: visible.length, href: unescapeHtml(href) });
        }
        stack.push(name);
      }
      i += whole.length;
      continue;
    }
    if (c === ">") throw new Error(`bare > at ${i} in ${JSON.stringify(input)}`);
    const next = input.indexOf("<", i);
    const end = next === -1 ? input.length : next;
    visible += unescapeHtml(
      input.slice(i, end).replace(/>/g, () => {
        throw new Error(`bare > in ${JSON.stringify(input)}`);
      }),
    );
    i = end;
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.join("><")}> in ${JSON.stringify(input)}`);
  return visible;
}

/** Reads Slack mrkdwn's escaping: `<` only opens `<url>`/`<url|label>`, `>` only closes it, `&` is an entity. */
function checkSlack(input: string): void {
  const outsideLinks = input.replace(
    /<([^<>|\s]+)(?:\|([^<>]*))?>/g,
    (_m, url: string, label: string | undefined) => {
      if (!/^(?:https?:\/\/|mailto:|tg:\/\/)/i.test(url)) throw new Error(`odd link ${url}`);
      unescapeHtml(label ?? "");
      return "";
    },
  );
  if (/[<>]/.test(outsideLinks)) throw new Error(`bare < or > in ${JSON.stringify(input)}`);
  unescapeHtml(outsideLinks);
}

// ---------------------------------------------------------------------------
// Examples.

describe("Telegram MarkdownV2", () => {
  it("escapes all 18 special characters and the backslash outside entities", () => {
    expect(escapeMarkdownV2("_*[]()~`>#+-=|{}.!\\")).toBe(
      "\\_\\*\\[\\]\\(\\)\\~\\`\\>\\#\\+\\-\\=\\|\\{\\}\\.\\!\\\\",
    );
    expect(toTelegramMarkdownV2("1 + 1 = 2. Done!")).toBe("1 \\+ 1 \\= 2\\. Done\\!");
  });

  it("renders bold, italic, strike, code, links and headings", () => {
    expect(toTelegramMarkdownV2("**bold** and *it* and _it2_ and ~~gone~~")).toBe(
      "*bold* and _it_ and _it2_ and ~gone~",
    );
    expect(toTelegramMarkdownV2("run `a_b*c`")).toBe("run `a_b*c`");
    expect(toTelegramMarkdownV2("see [the docs](https://x.dev/a_(b))")).toBe(
      "see [the docs](https://x.dev/a_(b\\))",
    );
    expect(toTelegramMarkdownV2("## Title.")).toBe("*Title\\.*");
    expect(toTelegramMarkdownV2("snake_case_name stays")).toBe("snake\\_case\\_name stays");
    expect(toTelegramMarkdownV2("a ** b")).toBe("a \\*\\* b");
  });

  it("escapes only ` and \\ inside code blocks and keeps the language", () => {
    expect(toTelegramMarkdownV2("```ts\nconst a = `x` + '\\\\';\n```")).toBe(
      "```ts\nconst a = \\`x\\` + '\\\\\\\\';\n```",
    );
  });

  it("shows a link with an unsupported scheme as text", () => {
    expect(toTelegramMarkdownV2("[x](javascript:alert)")).toBe("x \\(javascript:alert\\)");
  });

  it("merges adjacent italics so no __ appears", () => {
    const out = toTelegramMarkdownV2("_a__b_");
    expect(() => readMarkdownV2(out)).not.toThrow();
  });
});

describe("Telegram HTML", () => {
  it("escapes & < > and renders tags", () => {
    expect(toTelegramHtml("a < b && c > d")).toBe("a &lt; b &amp;&amp; c &gt; d");
    expect(toTelegramHtml("**b** *i* ~~s~~ `<c>`")).toBe("<b>b</b> <i>i</i> <s>s</s> <code>&lt;c&gt;</code>");
    expect(toTelegramHtml('[q](https://x.dev/?a=1&b="2")')).toBe(
      '<a href="https://x.dev/?a=1&amp;b=&quot;2&quot;">q</a>',
    );
    expect(toTelegramHtml("```py\nif a<b: pass\n```")).toBe(
      '<pre><code class="language-py">if a&lt;b: pass</code></pre>',
    );
  });
});

describe("Slack mrkdwn", () => {
  it("renders *bold* _italic_ ~strike~ and <url|text> links, escaping & < >", () => {
    expect(toSlackMrkdwn("**bold** *it* ~~s~~")).toBe("*bold* _it_ ~s~");
    expect(toSlackMrkdwn("[docs](https://x.dev) and <https://y.dev>")).toBe(
      "<https://x.dev|docs> and <https://y.dev>",
    );
    expect(toSlackMrkdwn("a < b & c > d")).toBe("a &lt; b &amp; c &gt; d");
    expect(toSlackMrkdwn("[a|b>c](https://x.dev/|x)")).toBe("<https://x.dev/%7Cx|a¦b&gt;c>");
  });
});

describe("plain", () => {
  it("drops markers and shows links as text (url)", () => {
    expect(toPlainText("**b** [d](https://x.dev) `c`\n```\ncode\n```")).toBe("b d (https://x.dev) c\ncode");
  });
});

describe("the test oracles", () => {
  it("reject invalid samples, so the properties can fail", () => {
    for (const bad of ["a.b", "*open", "_a*b_*", "a__b", "`code\\x`", "[x](y", "\\"]) {
      expect(() => readMarkdownV2(bad), bad).toThrow(/MarkdownV2 invalid/);
    }
    expect(readMarkdownV2("*b _i_* \\. [l](https://x\\)) `c\\``")).toBe("b i . l (https://x)) c`");
    for (const bad of ["a < b", "a & b", "<b>x", "<b><i>x</b></i>", "<u>x</u>", "x > y"]) {
      expect(() => readTelegramHtml(bad), bad).toThrow();
    }
    for (const bad of ["a < b", "a & b", "<javascript:x|y>", "x > y"])
      expect(() => checkSlack(bad), bad).toThrow();
  });
});

// ---------------------------------------------------------------------------
// Properties.

const token = fc.oneof(
  fc.constantFrom(
    ..."_*[]()~`>#+-=|{}.!\\<>&\"' \n",
    "**",
    "~~",
    "```",
    "```js\n",
    "\n```",
    "[a](https://x.dev/p)",
    "[b](ftp://x)",
    "# ",
    "😀",
  ),
  fc.string({ maxLength: 6 }),
);
const anyMarkdown = fc.array(token, { maxLength: 40 }).map((parts) => parts.join(""));

describe("formatting properties", () => {
  it("MarkdownV2 output is always valid and shows the plain text", () => {
    fc.assert(
      fc.property(anyMarkdown, (markdown) => {
        expect(readMarkdownV2(toTelegramMarkdownV2(markdown))).toBe(toPlainText(markdown));
      }),
      { numRuns: 1500 },
    );
  });

  it("Telegram HTML output is always valid and shows the plain text", () => {
    fc.assert(
      fc.property(anyMarkdown, (markdown) => {
        expect(readTelegramHtml(toTelegramHtml(markdown))).toBe(toPlainText(markdown));
      }),
      { numRuns: 1500 },
    );
  });

  it("Slack output never has a bare < > or &", () => {
    fc.assert(
      fc.property(anyMarkdown, (markdown) => {
        checkSlack(toSlackMrkdwn(markdown));
      }),
      { numRuns: 1500 },
    );
  });

  it("formatAndSplit: every chunk fits the limit after formatting and is valid on its own", () => {
    fc.assert(
      fc.property(anyMarkdown, fc.integer({ min: 24, max: 200 }), (markdown, limit) => {
        const v2 = formatAndSplit(markdown, "telegram-markdown-v2", limit);
        for (const chunk of v2) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          readMarkdownV2(chunk);
        }
        for (const chunk of formatAndSplit(markdown, "telegram-html", limit)) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          readTelegramHtml(chunk);
        }
        for (const chunk of formatAndSplit(markdown, "slack-mrkdwn", limit)) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          checkSlack(chunk);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe("formatAndSplit", () => {
  it("measures the formatted text: escaping that grows past the limit splits again", () => {
    const text = "a.b.c.d.e.f.g.h.i.j.k.l";
    expect(text.length).toBe(23);
    expect(formatAndSplit(text, "markdown", 23)).toEqual([text]);
    const chunks = formatAndSplit(text, "telegram-markdown-v2", 23);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.length <= 23)).toBe(true);
    expect(chunks.map((c) => c.replace(/\\/g, "")).join("")).toBe(text);
  });

  it("keeps long code blocks valid in every chunk", () => {
    const code = Array.from({ length: 50 }, (_unused, i) => `print("line ${i}")  # <${i}>`).join("\n");
    const chunks = formatAndSplit(`Here:\n\`\`\`python\n${code}\n\`\`\``, "telegram-html", 300);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(300);
      readTelegramHtml(chunk);
    }
  });
});
