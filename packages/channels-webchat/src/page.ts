// The chat page: one HTML document, one script and one stylesheet, served from the channel's own origin (no
// build step, no external assets) under a Content-Security-Policy that allows only same-origin scripts, styles
// and connections, forbids inline script and eval, and enforces Trusted Types so no HTML string can reach the
// DOM: every text is set with `textContent`. Owns the page; does not own the HTTP routes (channel.ts).
//
// The script reads the token from the URL fragment (`#token=…`, never sent to the server, so never in a log),
// keeps it in sessionStorage, removes it from the address bar, then reads the event stream with fetch (an
// EventSource cannot send an Authorization header) and resumes with `Last-Event-ID` after a drop.

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Agent chat</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<header><h1>Agent chat</h1><span id="status" role="status">connecting…</span></header>
<main id="log" role="log" aria-live="polite" aria-label="Messages"></main>
<div id="typing" hidden aria-live="polite"><span class="dots" aria-hidden="true"></span> Assistant is typing…</div>
<div id="attached" hidden aria-live="polite"></div>
<form id="composer" autocomplete="off">
<input id="attach" type="file" accept="image/png,image/jpeg,image/gif,image/webp" multiple aria-label="Attach images">
<label id="attach-button" for="attach" title="Attach images">Image</label>
<input id="input" name="text" aria-label="Message" placeholder="Write a message" maxlength="20000">
<button id="send" type="submit" disabled>Send</button>
</form>
<script src="/app.js"></script>
</body>
</html>
`;

export const PAGE_CSS = `* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; font: 15px/1.45 system-ui, sans-serif; background: #f4f5f7; color: #1d1f23; }
header { display: flex; align-items: baseline; gap: 1rem; padding: .6rem 1rem; background: #1d3557; color: #fff; }
header h1 { font-size: 1.05rem; margin: 0; }
#status { font-size: .8rem; opacity: .8; }
#log { flex: 1; overflow-y: auto; padding: 1rem; display: flex; flex-direction: column; gap: .5rem; }
.msg { max-width: 75%; padding: .5rem .75rem; border-radius: .8rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.msg.user { align-self: flex-end; background: #457b9d; color: #fff; border-bottom-right-radius: .2rem; }
.msg.bot { align-self: flex-start; background: #fff; border: 1px solid #dde1e6; border-bottom-left-radius: .2rem; }
.msg.failed { opacity: .55; border: 1px dashed #c1121f; }
.msg.streaming { border-style: dashed; }
.msg .block { margin: 0 0 .4rem; }
.msg .block:last-child { margin-bottom: 0; }
.msg .media { display: block; margin-top: .3rem; }
#typing { padding: 0 1rem .4rem; font-size: .85rem; color: #5c6370; }
#typing[hidden] { display: none; }
.dots::before { content: "• • •"; letter-spacing: .1em; }
#composer { display: flex; gap: .5rem; padding: .75rem 1rem; background: #fff; border-top: 1px solid #dde1e6; }
#input { flex: 1; padding: .55rem .7rem; font: inherit; border: 1px solid #c7ccd3; border-radius: .5rem; }
#send { padding: .55rem 1.1rem; font: inherit; border: 0; border-radius: .5rem; background: #1d3557; color: #fff; cursor: pointer; }
#send:disabled { background: #9aa5b1; cursor: default; }
#attach { position: absolute; width: 1px; height: 1px; opacity: 0; overflow: hidden; }
#attach-button { align-self: center; padding: .45rem .7rem; border: 1px solid #c7ccd3; border-radius: .5rem; cursor: pointer; font-size: .85rem; }
#attach:focus-visible + #attach-button { outline: 2px solid #457b9d; }
#attached { padding: .3rem 1rem; font-size: .85rem; color: #1d3557; background: #fff; border-top: 1px solid #dde1e6; }
#attached[hidden] { display: none; }
.msg .attachment { display: block; font-size: .85rem; opacity: .9; }
`;

export const PAGE_SCRIPT = `"use strict";
(function () {
  var fragment = new URLSearchParams(location.hash.slice(1));
  var token = fragment.get("token") || sessionStorage.getItem("webchat-token") || "";
  if (fragment.get("token")) {
    sessionStorage.setItem("webchat-token", token);
    history.replaceState(null, "", location.pathname + location.search);
  }
  var conversationId = sessionStorage.getItem("webchat-conversation");
  if (!conversationId) {
    conversationId = "c-" + crypto.randomUUID();
    sessionStorage.setItem("webchat-conversation", conversationId);
  }
  var log = document.getElementById("log");
  var typing = document.getElementById("typing");
  var statusLine = document.getElementById("status");
  var form = document.getElementById("composer");
  var input = document.getElementById("input");
  var sendButton = document.getElementById("send");
  var attach = document.getElementById("attach");
  var attachedLine = document.getElementById("attached");
  var lastEventId = "";
  var streamingReply = null;
  var byMessageId = new Map();

  function setStatus(text) { statusLine.textContent = text; }
  function scrollDown() { log.scrollTop = log.scrollHeight; }
  function bubble(role, text) {
    var element = document.createElement("div");
    element.className = "msg " + role;
    element.textContent = text;
    log.append(element);
    scrollDown();
    return element;
  }
  function appendMedia(element, media) {
    if (!Array.isArray(media)) return;
    media.forEach(function (item) {
      if (!item || typeof item.url !== "string" || !/^https?:\\/\\//i.test(item.url)) return;
      var link = document.createElement("a");
      link.className = "media";
      link.href = item.url;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      link.textContent = item.fileName || item.url;
      element.append(link);
    });
  }
  function onEvent(type, data) {
    if (type === "typing") {
      typing.hidden = !data.active;
      return;
    }
    if (type === "block") {
      if (!streamingReply) {
        streamingReply = document.createElement("div");
        streamingReply.className = "msg bot streaming";
        log.append(streamingReply);
      }
      var block = document.createElement("p");
      block.className = "block";
      block.dataset.messageId = data.messageId;
      block.textContent = data.text || "";
      appendMedia(block, data.media);
      streamingReply.append(block);
      byMessageId.set(data.messageId, block);
      scrollDown();
      return;
    }
    if (type === "message") {
      typing.hidden = true;
      if (streamingReply) {
        streamingReply.classList.remove("streaming");
        streamingReply = null;
      }
      var message = bubble("bot final", data.text || "");
      message.dataset.messageId = data.messageId;
      appendMedia(message, data.media);
      byMessageId.set(data.messageId, message);
      return;
    }
    if (type === "edit") {
      var edited = byMessageId.get(data.messageId);
      if (edited) edited.textContent = data.text || "";
    }
  }
  function handleFrame(frame) {
    var type = "message";
    var data = "";
    var id = "";
    frame.split("\\n").forEach(function (line) {
      if (!line || line.charAt(0) === ":") return;
      var colon = line.indexOf(":");
      var field = colon === -1 ? line : line.slice(0, colon);
      var value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.charAt(0) === " ") value = value.slice(1);
      if (field === "event") type = value;
      else if (field === "data") data = data ? data + "\\n" + value : value;
      else if (field === "id") id = value;
    });
    if (id) lastEventId = id;
    if (!data) return;
    var parsed;
    try { parsed = JSON.parse(data); } catch (error) { return; }
    onEvent(type, parsed);
  }
  function wait(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }
  async function readStream() {
    for (;;) {
      try {
        var headers = { authorization: "Bearer " + token };
        if (lastEventId) headers["last-event-id"] = lastEventId;
        var response = await fetch("/api/events?conversationId=" + encodeURIComponent(conversationId), { headers: headers, cache: "no-store" });
        if (response.status === 401) {
          setStatus("not authorised: open the link that carries #token=…");
          return;
        }
        if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
        setStatus("connected");
        sendButton.disabled = false;
        var reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        var buffer = "";
        for (;;) {
          var chunk = await reader.read();
          if (chunk.done) break;
          buffer += chunk.value.replace(/\\r\\n?/g, "\\n");
          var end;
          while ((end = buffer.indexOf("\\n\\n")) !== -1) {
            handleFrame(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        }
      } catch (error) {
        // dropped: reconnect below and resume after lastEventId
      }
      sendButton.disabled = true;
      setStatus("reconnecting…");
      await wait(1000);
    }
  }
  function showAttached() {
    var names = Array.prototype.map.call(attach.files || [], function (file) { return file.name; });
    attachedLine.textContent = names.length ? "Attached: " + names.join(", ") : "";
    attachedLine.hidden = names.length === 0;
  }
  attach.addEventListener("change", showAttached);
  // A picture as the API takes it: standard base64 of its bytes (the server checks type and size).
  async function encodeImage(file) {
    var bytes = new Uint8Array(await file.arrayBuffer());
    var binary = "";
    for (var at = 0; at < bytes.length; at += 0x8000) {
      binary += String.fromCharCode.apply(null, bytes.subarray(at, at + 0x8000));
    }
    return { data: btoa(binary), fileName: file.name };
  }
  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    var text = input.value.trim();
    var files = Array.prototype.slice.call(attach.files || []);
    if (!text && files.length === 0) return;
    input.value = "";
    attach.value = "";
    showAttached();
    var mine = bubble("user", text);
    files.forEach(function (file) {
      var note = document.createElement("span");
      note.className = "attachment";
      note.textContent = "[image: " + file.name + "]";
      mine.append(note);
    });
    try {
      var body = { conversationId: conversationId, text: text };
      if (files.length) body.images = await Promise.all(files.map(encodeImage));
      var response = await fetch("/api/messages", {
        method: "POST",
        headers: { authorization: "Bearer " + token, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (response.status !== 202) {
        var refusal = await response.json().catch(function () { return {}; });
        throw new Error(refusal.error || "HTTP " + response.status);
      }
      var accepted = await response.json();
      mine.dataset.messageId = accepted.messageId;
    } catch (error) {
      mine.classList.add("failed");
      mine.title = "not delivered: " + (error && error.message ? error.message : "network error");
    }
  });
  readStream();
})();
`;
