// The page: tabs over the mounted servers, fed by /api/state and the event stream.

import { el, markdownNode, tree, toolResult, resourceContents, content, failure } from './render.js';
import { schemaForm, promptSchema } from './forms.js';
import { showApp } from './apps.js';

const $ = (selector) => document.querySelector(selector);
let state = { servers: [], tools: [], prompts: [], resources: [], templates: [], withheld: [], chat: null };

async function post(path, body) {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  let value;
  try { value = JSON.parse(text); } catch { value = { error: text }; }
  if (!response.ok) throw new Error(value.error || `${response.status} ${response.statusText}`);
  return value;
}

// The state as the server has it. Refreshes can overlap (servers' news, the end of a
// turn, a resumed session): only the latest one started is shown, so that an older
// answer arriving late does not undo a newer one.
let refreshes = 0;
async function refresh() {
  const mine = ++refreshes;
  const response = await fetch('/api/state');
  if (!response.ok) throw new Error(await response.text());
  const fresh = await response.json();
  if (mine !== refreshes) return;
  state = fresh;
  showServers();
  showTools();
  showResources();
  showPrompts();
  showChatHeader();
}

// Tabs, with the one shown in the address (#tools), so that a reload stays there.
function choose(tab) {
  for (const button of document.querySelectorAll('#tabs button')) button.classList.toggle('active', button.dataset.tab === tab);
  for (const section of document.querySelectorAll('section.tab')) section.classList.toggle('active', section.id === tab);
  if (location.hash !== `#${tab}`) history.replaceState(null, '', `#${tab}`);
}
for (const button of document.querySelectorAll('#tabs button')) button.addEventListener('click', () => choose(button.dataset.tab));

function chosen(list, item) {
  for (const li of list.children) li.classList.toggle('chosen', li === item);
}

// ---- Servers
let shownServer = null;
let shownJson = null;
function showServers() {
  // The detail is drawn again only when it changed (a new pid, more stderr).
  const shown = state.servers.find((s) => s.name === shownServer);
  if (shown && JSON.stringify(shown) !== shownJson) showServer(shown);
  const body = $('#server-table tbody');
  body.replaceChildren(...state.servers.map((server) => {
    const offers = ['tools', 'prompts', 'resources'].map((kind) => `${state[kind].filter((t) => t.server === server.name).length} ${kind}`).join(', ');
    // Shown at once, then again with what it wrote since (its stderr tail).
    return el('tr', { class: 'server', 'data-server': server.name, onclick: () => { showServer(server); refresh().catch(() => {}); } },
      el('td', { text: server.name }),
      el('td', { class: server.state, text: server.state }),
      el('td', { text: server.transport || '' }),
      el('td', { text: server.protocolVersion || '' }),
      el('td', { text: server.startupMs == null ? '' : `${Math.round(server.startupMs)} ms` }),
      el('td', { text: server.state === 'ready' ? offers : '' }));
  }));
}

function showServer(server) {
  shownServer = server.name;
  shownJson = JSON.stringify(server);
  const info = server.serverInfo || {};
  $('#server-detail').replaceChildren(el('div', { class: 'detail' },
    el('h2', { text: server.name }),
    info.name ? el('p', { text: `${info.name} ${info.version || ''}` }) : null,
    server.pid ? el('p', { class: 'muted pid', text: `process ${server.pid}` }) : null,
    server.transport === 'stdio' ? el('button', { class: 'restart', text: 'Restart', onclick: async (event) => {
      event.target.disabled = true;
      try { await post('/api/restart', { server: server.name }); } catch (e) { event.target.after(failure(e.message)); }
    } }) : null,
    server.error ? failure(server.error) : null,
    server.instructions ? el('div', {}, el('h3', { text: 'Instructions' }), markdownNode(server.instructions)) : null,
    el('h3', { text: 'Last lines of stderr' }),
    server.stderrTail?.length ? el('pre', { class: 'stderr', text: server.stderrTail.join('\n') }) : el('p', { class: 'muted', text: 'nothing written' })));
}

// ---- Tools: listed in mount order, or ranked by prise's tool search for a query
let ranked = null; // the names in the order the search gave, or null for all
function showTools() {
  const order = ranked ?? state.tools.map((t) => t.name);
  const tools = order.map((name) => state.tools.find((t) => t.name === name)).filter(Boolean);
  const list = $('#tool-list');
  list.replaceChildren(...tools.map((t) => {
    const item = el('li', { 'data-tool': t.name, onclick: () => { chosen(list, item); showTool(t); } },
      t.name, el('small', { text: t.tool.description || '' }));
    return item;
  }));
  for (const w of state.withheld) {
    list.append(el('li', { class: 'withheld', title: w.why }, `${w.name} (withheld)`, el('small', { text: `${w.why}; \`prise trust ${w.server}\` shows it` })));
  }
}

let searching = 0;
async function searchTools() {
  const query = $('#tool-search').value.trim();
  const mine = ++searching;
  if (!query) { ranked = null; showTools(); return; }
  const response = await fetch(`/api/search?q=${encodeURIComponent(query)}`);
  if (!response.ok || mine !== searching) return;
  ranked = (await response.json()).map((found) => found.name);
  showTools();
}
$('#tool-search').addEventListener('input', () => searchTools().catch(() => {}));

function showTool(t) {
  const tool = t.tool;
  const result = el('div', { class: 'call-result' });
  const annotations = tool.annotations ? Object.entries(tool.annotations).map(([k, v]) => `${k}: ${v}`).join(', ') : '';
  const form = schemaForm(tool.inputSchema, {
    submit: 'Call',
    onSubmit: async (values) => {
      result.replaceChildren(el('p', { class: 'muted', text: 'calling…' }));
      try {
        const answer = await post('/api/call', { name: t.name, arguments: values });
        result.replaceChildren(toolResult(answer, { onResourceLink: openResource }));
        if (t.app) showApp(result, { tool: t.name, definition: tool, args: values, result: answer, post, onMessage: toChat });
      } catch (e) {
        result.replaceChildren(failure(e.message));
      }
    },
  });
  $('#tool-detail').replaceChildren(
    el('h2', { text: tool.title || t.name }),
    el('p', { class: 'muted' }, el('code', { text: t.name }), ` on ${t.server}`, annotations ? ` · ${annotations}` : '', t.app ? ` · app ${t.app}` : ''),
    markdownNode(tool.description || ''),
    el('h3', { text: 'Arguments' }), form,
    el('details', {}, el('summary', { text: 'Input schema' }), tree(tool.inputSchema)),
    tool.outputSchema ? el('details', {}, el('summary', { text: 'Output schema' }), tree(tool.outputSchema)) : null,
    result);
}

// ---- Resources
function showResources() {
  const list = $('#resource-list');
  list.replaceChildren(...state.resources.map(({ server, resource }) => {
    const item = el('li', { 'data-uri': resource.uri, onclick: () => { chosen(list, item); readResource(resource.uri, server, resource); } },
      resource.title || resource.name || resource.uri, el('small', { text: `${server} · ${resource.mimeType || ''} · ${resource.uri}` }));
    return item;
  }));
  const templates = $('#template-list');
  templates.replaceChildren(...state.templates.map(({ server, template }) => {
    const item = el('li', { 'data-template': template.uriTemplate, onclick: () => { chosen(templates, item); fillTemplate(server, template); } },
      template.title || template.name, el('small', { text: template.uriTemplate }));
    return item;
  }));
}

async function readResource(uri, server, resource) {
  const detail = $('#resource-detail');
  detail.replaceChildren(el('h2', { text: resource?.name || uri }), el('p', { class: 'muted', text: 'reading…' }));
  try {
    const read = await post('/api/read', { uri, server });
    detail.replaceChildren(el('h2', { text: resource?.title || resource?.name || uri }), el('p', { class: 'muted', text: uri }),
      ...read.contents.map((c) => el('div', { class: 'contents' }, resourceContents(c))));
  } catch (e) {
    detail.replaceChildren(el('h2', { text: uri }), failure(e.message));
  }
}

function openResource(uri) {
  choose('resources');
  readResource(uri);
}

// A template's variables ({name}, {+name}, {?a,b}) as a form; the URI is filled in here.
function fillTemplate(server, template) {
  const names = [...template.uriTemplate.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) => m[1].split(',').map((n) => n.replace(/\*$/, '')));
  const schema = { type: 'object', properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])), required: names };
  const form = schemaForm(schema, {
    submit: 'Read',
    onSubmit: (values) => {
      const uri = template.uriTemplate.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_, op, list) => {
        const parts = list.split(',').map((n) => n.replace(/\*$/, ''));
        if (op === '?' || op === '&') return (op) + parts.map((n) => `${n}=${encodeURIComponent(values[n] ?? '')}`).join('&');
        const joined = parts.map((n) => (op === '+' ? values[n] : encodeURIComponent(values[n] ?? ''))).join(',');
        return (op === '.' || op === '/' || op === '#') ? op + joined : joined;
      });
      readResource(uri, server);
    },
  });
  $('#resource-detail').replaceChildren(el('h2', { text: template.name }), el('p', { class: 'muted', text: template.uriTemplate }),
    template.description ? markdownNode(template.description) : null, form);
}

// ---- Prompts
function showPrompts() {
  const list = $('#prompt-list');
  list.replaceChildren(...state.prompts.map((p) => {
    const item = el('li', { 'data-prompt': p.name, onclick: () => { chosen(list, item); showPrompt(p); } }, p.name, el('small', { text: p.prompt.description || '' }));
    return item;
  }));
}

function showPrompt(p) {
  const preview = el('div', { class: 'preview' });
  const form = schemaForm(promptSchema(p.prompt), {
    submit: 'Preview',
    onSubmit: async (values) => {
      try {
        const got = await post('/api/prompt', { name: p.name, arguments: values });
        preview.replaceChildren(...(got.messages || []).map((m) => el('div', { class: 'msg' }, el('strong', { text: `${m.role}: ` }), content(m.content, { onResourceLink: openResource }))));
      } catch (e) {
        preview.replaceChildren(failure(e.message));
      }
    },
  });
  $('#prompt-detail').replaceChildren(el('h2', { text: p.prompt.title || p.name }), markdownNode(p.prompt.description || ''), form, preview);
}

// ---- Trace
const TRACE_KEPT = 2000;
function traceSummary(message) {
  const cut = message._prise ? ` (${message._prise})` : '';
  if (message.method) return `${message.method}${message.id !== undefined ? ` #${message.id}` : ''}${cut}`;
  if (message.error) return `error #${message.id}: ${message.error.message}`;
  return `result #${message.id}${cut}`;
}

function addTrace(event) {
  const select = $('#trace-server');
  if (![...select.options].some((o) => o.value === event.server)) select.append(el('option', { value: event.server, text: event.server }));
  const summary = traceSummary(event.message);
  const item = el('li', { 'data-server': event.server, 'data-text': `${summary} ${JSON.stringify(event.message)}`.toLowerCase() },
    el('details', { ontoggle: (e) => { if (e.target.open && e.target.children.length === 1) e.target.append(tree(event.message)); } },
      el('summary', {},
        el('span', { class: event.outgoing ? 'out' : 'in', text: event.outgoing ? '→ ' : '← ' }),
        el('span', { class: 'muted', text: `${(event.at / 1000).toFixed(3)}s ${event.server} ` }),
        summary)));
  const list = $('#trace-list');
  filterTrace(item);
  list.append(item);
  while (list.children.length > TRACE_KEPT) list.firstChild.remove();
  if ($('#trace-follow').checked) item.scrollIntoView({ block: 'nearest' });
}

function filterTrace(item) {
  const server = $('#trace-server').value;
  const text = $('#trace-filter').value.toLowerCase();
  item.hidden = (server && item.dataset.server !== server) || (text && !item.dataset.text.includes(text));
}
for (const control of ['#trace-server', '#trace-filter']) {
  $(control).addEventListener('input', () => { for (const item of $('#trace-list').children) filterTrace(item); });
}
$('#trace-clear').addEventListener('click', () => $('#trace-list').replaceChildren());

// ---- Chat
let answering = null; // the assistant message being written
const calls = new Map();

function showChatHeader() {
  const chat = state.chat;
  $('#chat-model').textContent = chat ? `${chat.model} · session ${chat.session || 'unsaved'}` : 'no model configured: start prise ui with -m PROVIDER:MODEL';
  $('#chat-send').disabled = !chat;
}

function chatLog() { return $('#chat-log'); }
function scrollChat() { const log = chatLog(); log.scrollTop = log.scrollHeight; }

function assistant() {
  if (!answering) {
    answering = { text: '', node: el('div', { class: 'msg assistant' }) };
    chatLog().append(answering.node);
  }
  return answering;
}

function onAgent(event) {
  switch (event.type) {
    case 'model-delta': {
      const a = assistant();
      a.text += event.text;
      a.node.replaceChildren(markdownNode(a.text));
      break;
    }
    case 'tool-start': {
      answering = null;
      const result = el('div', { class: 'call-result muted', text: 'running…' });
      const node = el('details', { class: 'call', 'data-tool': event.tool },
        el('summary', {}, 'tool ', el('code', { text: event.tool }), el('span', { class: 'muted', text: ` ${JSON.stringify(event.arguments)}` })),
        el('h4', { text: 'Arguments' }), tree(event.arguments), el('h4', { text: 'Result' }), result);
      calls.set(event.id, { node, result, arguments: event.arguments, tool: event.tool });
      chatLog().append(node);
      break;
    }
    case 'approval': {
      const call = calls.get(event.id);
      if (call && !event.allowed) call.result.replaceChildren(failure(`not run: ${event.reason}`));
      break;
    }
    case 'tool-end': {
      const call = calls.get(event.id);
      if (!call) break;
      call.node.querySelector('summary').append(el('span', { class: event.ok ? 'ready' : 'failed', text: ` ${event.outcome}` }));
      if (event.outcome === 'refused' && call.result.querySelector('.error')) break;
      const result = { content: [{ type: 'text', text: event.result.text }], isError: event.result.isError, structuredContent: event.result.structuredContent ?? undefined };
      call.result.className = 'call-result';
      call.result.replaceChildren(toolResult(result, { onResourceLink: openResource }));
      const tool = state.tools.find((t) => t.name === event.tool);
      if (tool?.app && event.ok) showApp(call.result, { tool: tool.name, definition: tool.tool, args: call.arguments, result, post, onMessage: toChat });
      break;
    }
    case 'error':
      chatLog().append(el('div', { class: 'msg error', text: event.retrying ? `retrying: ${event.message}` : event.message }));
      break;
    default:
      break;
  }
  scrollChat();
}

function onChat(event) {
  if (event.kind === 'chat-question') {
    answering = null;
    chatLog().append(el('div', { class: 'msg user', text: event.text }));
    $('#chat-cancel').disabled = false;
    $('#chat-send').disabled = true;
  } else if (event.kind === 'chat-end') {
    if (event.error) chatLog().append(failure(event.error));
    if (event.cancelled) chatLog().append(el('p', { class: 'muted', text: '(cancelled)' }));
    answering = null;
    $('#chat-cancel').disabled = true;
    $('#chat-send').disabled = !state.chat;
    chatLog().append(el('div', { class: 'turn-end' }));
    refresh().catch(() => {});
  } else if (event.kind === 'chat-resumed') {
    answering = null;
    calls.clear();
    chatLog().replaceChildren(...event.exchanges.flatMap((x) => [el('div', { class: 'msg user', text: x.question }), el('div', { class: 'msg assistant' }, markdownNode(x.answer))]));
    refresh().catch(() => {});
  }
  scrollChat();
}

function toChat(params) {
  // An app's ui/message: put into the chat's input for the person to send.
  const text = (Array.isArray(params.content) ? params.content : [params.content]).filter((c) => c?.type === 'text').map((c) => c.text).join('\n');
  choose('chat');
  $('#chat-input').value = text;
  $('#chat-input').focus();
}

$('#chat-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const prompt = $('#chat-input').value.trim();
  if (!prompt) return;
  try {
    await post('/api/chat', { prompt });
    $('#chat-input').value = '';
  } catch (e) {
    chatLog().append(failure(e.message));
  }
});
$('#chat-input').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) { event.preventDefault(); $('#chat-form').requestSubmit(); }
});
$('#chat-cancel').addEventListener('click', () => post('/api/chat/cancel', {}).catch(() => {}));

async function loadSessions() {
  const response = await fetch('/api/sessions');
  if (!response.ok) return;
  const sessions = await response.json();
  $('#chat-sessions').replaceChildren(el('option', { value: '', text: 'new session' }),
    ...sessions.map((s) => el('option', { value: s.id, text: `${s.id} · ${s.turns} questions · ${s.firstPrompt || s.first_prompt || ''}` })));
}
$('#chat-resume').addEventListener('click', async () => {
  const id = $('#chat-sessions').value || null;
  try { await post('/api/sessions/resume', { id }); } catch (e) { chatLog().append(failure(e.message)); }
});

// ---- Questions: approvals and elicitations, answered in any tab
const questions = new Map();

function ask(question) {
  if (questions.has(question.id)) return;
  const answer = (body) => post('/api/answer', { id: question.id, ...body }).catch((e) => card.append(failure(e.message)));
  let card;
  if (question.type === 'approval') {
    const [server, name] = question.tool.includes('__') ? question.tool.split(/__(.*)/s) : ['prise', question.tool];
    card = el('div', { class: 'question approval', 'data-question': question.id },
      el('h3', {}, `Server ${server} wants to run `, el('code', { text: name })),
      tree(question.arguments),
      el('div', { class: 'buttons' },
        el('button', { class: 'allow', text: 'Allow once', onclick: () => answer({ answer: 'yes' }) }),
        el('button', { class: 'always', text: `Always for ${question.tool}`, onclick: () => answer({ answer: 'always' }) }),
        el('button', { class: 'deny', text: 'Deny', onclick: () => answer({ answer: 'no' }) })));
  } else {
    const form = schemaForm(question.schema, {
      submit: 'Send',
      onSubmit: (values) => answer({ action: 'accept', content: values }),
      extraButtons: [
        el('button', { type: 'button', class: 'decline', text: 'Decline', onclick: () => answer({ action: 'decline' }) }),
        el('button', { type: 'button', class: 'cancel', text: 'Cancel', onclick: () => answer({ action: 'cancel' }) }),
      ],
    });
    card = el('div', { class: 'question elicitation', 'data-question': question.id },
      el('h3', { text: `${question.server} asks` }), markdownNode(question.message), form);
  }
  questions.set(question.id, card);
  $('#questions').append(card);
}

function answered(id) {
  questions.get(id)?.remove();
  questions.delete(id);
}

// ---- The event stream
let lastEvent = -1;
let refreshing = null;
function refreshSoon() {
  clearTimeout(refreshing);
  refreshing = setTimeout(() => refresh().catch(() => {}), 100);
}

function connect() {
  const source = new EventSource('/api/events');
  source.onopen = () => { $('#connection').textContent = 'live'; };
  source.onerror = () => { $('#connection').textContent = 'reconnecting…'; };
  source.onmessage = (message) => {
    // After a reconnection the past comes again: each event is taken once.
    if (message.lastEventId !== '') {
      const id = Number(message.lastEventId);
      if (id <= lastEvent) return;
      lastEvent = id;
    }
    const event = JSON.parse(message.data);
    switch (event.kind) {
      case 'trace': addTrace(event); break;
      case 'server':
        if (['ready', 'failed', 'restarting', 'list-changed'].includes(event.event)) refreshSoon();
        break;
      case 'agent': onAgent(event.event); break;
      case 'chat-question': case 'chat-end': case 'chat-resumed': onChat(event); break;
      case 'question': ask(event); break;
      case 'answered': answered(event.id); break;
      default: break;
    }
  };
}

choose(location.hash.slice(1) || 'servers');
refresh().then(() => { connect(); loadSessions(); document.body.dataset.ready = 'true'; })
  .catch((e) => { document.body.prepend(failure(`cannot load the state: ${e.message}`)); });
