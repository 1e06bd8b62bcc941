// A minimal XML writer for the e-invoice syntaxes: elements with attributes and text, escaped, UTF-8.
// Optional content is written as null/undefined and dropped, so a mapping reads as the document it makes.
export type XmlChild = XmlNode | string | null | undefined | false;

export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlChild[];
}

/** An element; `attrs` may be omitted. Nulls among the children are dropped. */
export function el(name: string, attrsOrChild?: Record<string, string> | XmlChild, ...children: XmlChild[]): XmlNode {
  if (attrsOrChild && typeof attrsOrChild === 'object' && !('children' in attrsOrChild)) {
    return { name, attrs: attrsOrChild as Record<string, string>, children };
  }
  return { name, attrs: {}, children: [attrsOrChild as XmlChild, ...children] };
}

/** An element with text, or nothing when the text is null or empty. */
export function text(name: string, value: string | null | undefined, attrs: Record<string, string> = {}): XmlNode | null {
  return value === null || value === undefined || value === '' ? null : { name, attrs, children: [value] };
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (s: string) => escapeText(s).replace(/"/g, '&quot;');
// Characters XML 1.0 cannot carry at all (a control character typed into a note) are dropped.
// eslint-disable-next-line no-control-regex
const invalidXmlChars = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

function write(node: XmlNode, out: string[]): void {
  const attrs = Object.entries(node.attrs).map(([k, v]) => ` ${k}="${escapeAttr(v.replace(invalidXmlChars, ''))}"`).join('');
  const kids = node.children.filter((c): c is XmlNode | string => c !== null && c !== undefined && c !== false);
  if (!kids.length) {
    out.push(`<${node.name}${attrs}/>`);
    return;
  }
  out.push(`<${node.name}${attrs}>`);
  for (const kid of kids) {
    if (typeof kid === 'string') out.push(escapeText(kid.replace(invalidXmlChars, '')));
    else write(kid, out);
  }
  out.push(`</${node.name}>`);
}

export function serialize(root: XmlNode): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  write(root, out);
  out.push('\n');
  return out.join('');
}
