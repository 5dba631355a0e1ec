// MCP Apps: a tool's `ui://` page in a sandboxed frame, and the host's side of the
// bridge (JSON-RPC over postMessage, as the io.modelcontextprotocol/ui extension
// says). The frame has an origin of its own (opaque: `sandbox` without
// `allow-same-origin`), so it can reach neither this page nor its cookie; what it
// may do goes through the messages below, and its tool calls through the approval
// policy (/api/app-call).

import { el } from './render.js';

const PROTOCOL = '2026-01-26';

export function showApp(container, { tool, definition, args, result, post, onMessage }) {
  const frame = el('iframe', {
    class: 'app',
    sandbox: 'allow-scripts allow-forms',
    title: `app of ${tool}`,
    src: `/app?tool=${encodeURIComponent(tool)}`,
  });
  let initialized = false;
  const send = (message) => frame.contentWindow?.postMessage({ jsonrpc: '2.0', ...message }, '*');
  const reply = (id, outcome) => outcome.then(
    (value) => send({ id, result: value }),
    (error) => send({ id, error: { code: error.code ?? -32000, message: error.message } }));
  const listener = (event) => {
    if (event.source !== frame.contentWindow) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return;
    const { id, method, params = {} } = message;
    switch (method) {
      case 'ui/initialize':
        reply(id, Promise.resolve({
          protocolVersion: PROTOCOL,
          hostInfo: { name: 'prise', version: '0.1.0' },
          hostCapabilities: { serverTools: {}, serverResources: {}, openLinks: {}, logging: {} },
          hostContext: {
            theme: matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
            displayMode: 'inline',
            availableDisplayModes: ['inline'],
            platform: 'web',
            toolInfo: { tool: definition },
          },
        }));
        break;
      case 'ui/notifications/initialized':
        if (initialized) break;
        initialized = true;
        send({ method: 'ui/notifications/tool-input', params: { arguments: args || {} } });
        if (result) send({ method: 'ui/notifications/tool-result', params: result });
        break;
      case 'tools/call':
        reply(id, post('/api/app-call', { tool, name: params.name, arguments: params.arguments || {} }));
        break;
      case 'resources/read':
        reply(id, post('/api/read', { uri: params.uri, tool }));
        break;
      case 'ui/open-link': {
        const url = String(params.url || '');
        if (/^https?:\/\//.test(url)) {
          window.open(url, '_blank', 'noopener,noreferrer');
          reply(id, Promise.resolve({}));
        } else {
          reply(id, Promise.reject(Object.assign(new Error('only http and https links are opened'), { code: -32602 })));
        }
        break;
      }
      case 'ui/message':
        onMessage?.(params);
        reply(id, Promise.resolve({}));
        break;
      case 'ui/notifications/size-changed':
        if (Number.isFinite(params.height)) frame.style.height = `${Math.min(Math.max(params.height, 60), 2000)}px`;
        break;
      case 'ping':
        reply(id, Promise.resolve({}));
        break;
      default:
        if (id !== undefined) {
          reply(id, Promise.reject(Object.assign(new Error(`prise does not answer ${method}`), { code: -32601 })));
        }
    }
  };
  window.addEventListener('message', listener);
  container.append(frame);
  return frame;
}
