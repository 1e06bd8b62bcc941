// Prints the text of the PDF read from stdin (unpdf / PDF.js). Run as a child process: PDF.js is an
// ES module, which jest's CommonJS runtime cannot import.
import { extractText, getDocumentProxy } from 'unpdf';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const pdf = await getDocumentProxy(new Uint8Array(Buffer.concat(chunks)));
const { text } = await extractText(pdf, { mergePages: true });

process.stdout.write(JSON.stringify({ text, pages: pdf.numPages }));
