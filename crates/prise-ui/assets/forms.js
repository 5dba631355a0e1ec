// Forms generated from JSON schemas: a tool's input schema, an elicitation's
// requested schema, a prompt's arguments.

import { el } from './render.js';

// The choices of a property: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `const`s with titles.
function choices(schema) {
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((value, i) => ({ value, title: schema.enumNames?.[i] ?? String(value) }));
  }
  const options = schema.oneOf || schema.anyOf;
  if (Array.isArray(options) && options.every((o) => o && 'const' in o)) {
    return options.map((o) => ({ value: o.const, title: o.title ?? String(o.const) }));
  }
  return null;
}

function field(name, schema, required) {
  const id = `field-${name}-${Math.random().toString(36).slice(2, 8)}`;
  const label = el('label', { for: id }, schema.title || name, required ? ' *' : '',
    schema.description ? el('small', { text: ` ${schema.description}` }) : null);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const options = choices(schema);
  const itemChoices = type === 'array' && schema.items ? choices(schema.items) : null;
  let input;
  let read;
  if (options) {
    input = el('select', { id, name }, required ? null : el('option', { value: '', text: '' }),
      options.map((o, i) => el('option', { value: String(i), text: o.title, selected: o.value === schema.default })));
    read = () => (input.value === '' ? undefined : options[Number(input.value)].value);
  } else if (itemChoices) {
    input = el('select', { id, name, multiple: true },
      itemChoices.map((o, i) => el('option', { value: String(i), text: o.title, selected: (schema.default || []).includes(o.value) })));
    read = () => [...input.selectedOptions].map((o) => itemChoices[Number(o.value)].value);
  } else if (type === 'boolean') {
    input = el('input', { id, name, type: 'checkbox', checked: schema.default === true });
    read = () => input.checked;
  } else if (type === 'number' || type === 'integer') {
    input = el('input', { id, name, type: 'number', step: type === 'integer' ? '1' : 'any', value: schema.default, min: schema.minimum, max: schema.maximum });
    read = () => (input.value === '' ? undefined : Number(input.value));
  } else if (type === 'string' || type === undefined && !schema.properties) {
    const long = (schema.maxLength ?? 0) > 200 || schema.format === 'textarea';
    input = long
      ? el('textarea', { id, name, rows: 4, text: schema.default ?? '' })
      : el('input', { id, name, type: 'text', value: schema.default, placeholder: schema.format || '' });
    read = () => (input.value === '' ? undefined : input.value);
  } else {
    input = el('textarea', { id, name, rows: 4, placeholder: 'JSON', text: schema.default === undefined ? '' : JSON.stringify(schema.default, null, 2) });
    read = () => {
      if (input.value.trim() === '') return undefined;
      try { return JSON.parse(input.value); } catch (e) { throw new Error(`${name}: not JSON (${e.message})`); }
    };
  }
  return { node: el('div', { class: 'field' }, label, input), read, name, required };
}

// A form for `schema` (an object schema); `onSubmit(values)` gets the values entered.
export function schemaForm(schema, { submit = 'Submit', onSubmit, extraButtons = [] } = {}) {
  const properties = schema?.properties || {};
  const required = new Set(schema?.required || []);
  const fields = Object.entries(properties).map(([name, property]) => field(name, property || {}, required.has(name)));
  const problem = el('p', { class: 'error', hidden: true });
  const form = el('form', { class: 'schema' }, fields.map((f) => f.node), problem,
    el('div', { class: 'buttons' }, el('button', { type: 'submit', text: submit }), extraButtons));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    try {
      const values = {};
      for (const f of fields) {
        const value = f.read();
        if (value === undefined) {
          if (f.required) throw new Error(`${f.name} is required`);
        } else {
          values[f.name] = value;
        }
      }
      problem.hidden = true;
      onSubmit?.(values);
    } catch (e) {
      problem.textContent = e.message;
      problem.hidden = false;
    }
  });
  if (!fields.length) form.prepend(el('p', { class: 'muted', text: 'No arguments.' }));
  return form;
}

// A prompt's arguments as an object schema of strings.
export function promptSchema(prompt) {
  const properties = {};
  for (const a of prompt.arguments || []) properties[a.name] = { type: 'string', title: a.title || a.name, description: a.description };
  return { type: 'object', properties, required: (prompt.arguments || []).filter((a) => a.required).map((a) => a.name) };
}
