// Rendering what servers and models send: Markdown (escaped first, so nothing a
// server writes becomes markup), tool results by content type, JSON as a tree.

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function inline(text) {
  // `text` is escaped already; code spans first, so that nothing inside them is styled.
  const codes = [];
  text = text.replace(/`([^`]+)`/g, (_, code) => { codes.push(code); return `\u0000${codes.length - 1}\u0000`; });
  text = text
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>')
    .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, '<a href="$2" target="_blank" rel="noopener noreferrer">$1</a>');
  return text.replace(/\u0000(\d+)\u0000/g, (_, i) => `<code>${codes[Number(i)]}</code>`);
}

// A small Markdown: headings, paragraphs, lists, fenced code, quotes, bold, italics,
// code spans and http(s) links. Anything else stays text.
export function markdown(source) {
  const lines = escape(source ?? '').split('\n');
  const out = [];
  let list = null;
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) out.push(`<p>${inline(paragraph.join(' '))}</p>`);
    paragraph = [];
  };
  const endList = () => { if (list) { out.push(`</${list}>`); list = null; } };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^```/);
    if (fence) {
      flush(); endList();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith('```'); i++) code.push(lines[i]);
      out.push(`<pre><code>${code.join('\n')}</code></pre>`);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    const bullet = line.match(/^\s*[-*+]\s+(.*)$/);
    const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
    if (heading) {
      flush(); endList();
      const level = Math.min(heading[1].length + 2, 6);
      out.push(`<h${level}>${inline(heading[2])}</h${level}>`);
    } else if (bullet || numbered) {
      flush();
      const kind = bullet ? 'ul' : 'ol';
      if (list !== kind) { endList(); out.push(`<${kind}>`); list = kind; }
      out.push(`<li>${inline((bullet || numbered)[1])}</li>`);
    } else if (line.startsWith('&gt; ')) {
      flush(); endList();
      out.push(`<blockquote>${inline(line.slice(5))}</blockquote>`);
    } else if (!line.trim()) {
      flush(); endList();
    } else {
      endList();
      paragraph.push(line);
    }
  }
  flush(); endList();
  return out.join('');
}

export function markdownNode(source, tag = 'div') {
  const node = el(tag, { class: 'markdown' });
  node.innerHTML = markdown(source);
  return node;
}

// JSON as a tree of <details>, open two levels down.
export function tree(value, depth = 0) {
  if (value === null || typeof value !== 'object') {
    const kind = typeof value === 'string' ? 'str' : typeof value === 'number' ? 'num' : 'lit';
    return el('span', { class: kind, text: JSON.stringify(value) });
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const label = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return el('details', { class: 'tree', open: depth < 2 },
    el('summary', { text: label }),
    entries.map(([key, item]) => el('div', {}, el('span', { class: 'key', text: `${key}: ` }), tree(item, depth + 1))));
}

const mediaSafe = (mime, prefix) => typeof mime === 'string' && mime.startsWith(prefix) && /^[\w.+\/-]+$/.test(mime);

// One content block of a tool result or a prompt message.
export function content(block, { onResourceLink } = {}) {
  switch (block.type) {
    case 'text':
      return markdownNode(block.text);
    case 'image':
      return mediaSafe(block.mimeType, 'image/')
        ? el('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: 'image from the server' })
        : el('p', { class: 'error', text: `an image of type ${block.mimeType} is not shown` });
    case 'audio':
      return mediaSafe(block.mimeType, 'audio/')
        ? el('audio', { controls: true, src: `data:${block.mimeType};base64,${block.data}` })
        : el('p', { class: 'error', text: `audio of type ${block.mimeType} is not played` });
    case 'resource_link':
      return el('p', {}, '🔗 ', el('a', { href: '#', class: 'resource-link', onclick: (e) => { e.preventDefault(); onResourceLink?.(block.uri); } }, block.name || block.uri),
        block.description ? el('small', { class: 'muted', text: ` ${block.description}` }) : null);
    case 'resource':
      return resourceContents(block.resource);
    default:
      return tree(block);
  }
}

// One entry of a resource's contents: text (Markdown when it says so), an image, a sound, or bytes.
export function resourceContents(item) {
  const mime = item.mimeType || '';
  if (item.text !== undefined) {
    if (mime.includes('markdown')) return markdownNode(item.text);
    if (mime.includes('json')) {
      try { return tree(JSON.parse(item.text)); } catch { /* shown as text */ }
    }
    return el('pre', { text: item.text });
  }
  if (mediaSafe(mime, 'image/')) return el('img', { src: `data:${mime};base64,${item.blob}`, alt: item.uri });
  if (mediaSafe(mime, 'audio/')) return el('audio', { controls: true, src: `data:${mime};base64,${item.blob}` });
  return el('p', { class: 'muted', text: `${item.uri}: ${Math.floor(((item.blob || '').length * 3) / 4)} bytes of ${mime || 'unknown type'}` });
}

// A tool result: its content, its structured content as a tree, its error.
export function toolResult(result, options) {
  const box = el('div', { class: result.isError ? 'result error' : 'result' });
  if (result.isError) box.append(el('strong', { text: 'The tool reported an error' }));
  for (const block of result.content || []) box.append(content(block, options));
  if (result.structuredContent !== undefined) {
    box.append(el('h4', { text: 'Structured content' }), tree(result.structuredContent));
  }
  return box;
}

export function failure(message) {
  return el('div', { class: 'result error' }, el('strong', { text: 'Error: ' }), message);
}
