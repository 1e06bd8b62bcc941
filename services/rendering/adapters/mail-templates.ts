// The localised mail templates (handlebars): the subject and text used when a send request left them
// empty, and the HTML part around the text. en, cs, sk, de; anything else falls back to en.
import Handlebars from 'handlebars';
import type { MailTemplates, MailTemplateVars } from '../ports/mail';

const SOURCES: Record<string, { subject: string; text: string; greeting: string; footer: string }> = {
  en: {
    subject: 'Invoice {{number}}',
    text: 'Hello,\n\nplease find attached invoice {{number}}.\n\nKind regards',
    greeting: 'Invoice {{number}}',
    footer: 'The invoice is attached as a PDF.',
  },
  cs: {
    subject: 'Faktura {{number}}',
    text: 'Dobrý den,\n\nv příloze zasíláme fakturu {{number}}.\n\nS pozdravem',
    greeting: 'Faktura {{number}}',
    footer: 'Faktura je přiložena jako PDF.',
  },
  sk: {
    subject: 'Faktúra {{number}}',
    text: 'Dobrý deň,\n\nv prílohe posielame faktúru {{number}}.\n\nS pozdravom',
    greeting: 'Faktúra {{number}}',
    footer: 'Faktúra je priložená ako PDF.',
  },
  de: {
    subject: 'Rechnung {{number}}',
    text: 'Guten Tag,\n\nanbei erhalten Sie die Rechnung {{number}}.\n\nMit freundlichen Grüßen',
    greeting: 'Rechnung {{number}}',
    footer: 'Die Rechnung ist als PDF angehängt.',
  },
};

const HTML = `<!doctype html>
<html lang="{{locale}}"><head><meta charset="utf-8"><title>{{title}}</title></head>
<body style="font-family: Arial, Helvetica, sans-serif; font-size: 14px; color: #222;">
{{#each paragraphs}}<p>{{#each this}}{{this}}{{#unless @last}}<br>{{/unless}}{{/each}}</p>
{{/each}}<p style="color: #777; font-size: 12px;">{{footer}}</p>
</body></html>`;

type Compiled = { subject: HandlebarsTemplateDelegate; text: HandlebarsTemplateDelegate; greeting: HandlebarsTemplateDelegate; footer: HandlebarsTemplateDelegate };

export class HandlebarsMailTemplates implements MailTemplates {
  private readonly hb = Handlebars.create();
  private readonly compiled = new Map<string, Compiled>();
  private readonly htmlTemplate = this.hb.compile(HTML);

  constructor() {
    for (const [locale, source] of Object.entries(SOURCES)) {
      // Plain-text templates: nothing to escape (the HTML template escapes on its own).
      const c = (s: string) => this.hb.compile(s, { noEscape: true });
      this.compiled.set(locale, { subject: c(source.subject), text: c(source.text), greeting: c(source.greeting), footer: c(source.footer) });
    }
  }

  private of(locale: string): Compiled {
    return this.compiled.get(locale) ?? this.compiled.get('en')!;
  }

  subject(vars: MailTemplateVars): string {
    return this.of(vars.locale).subject(vars);
  }

  text(vars: MailTemplateVars): string {
    return this.of(vars.locale).text(vars);
  }

  html(vars: MailTemplateVars): string {
    const t = this.of(vars.locale);
    const paragraphs = vars.message.split(/\r?\n\s*\r?\n/).map((p) => p.split(/\r?\n/));
    return this.htmlTemplate({ locale: SOURCES[vars.locale] ? vars.locale : 'en', title: t.greeting(vars), paragraphs, footer: t.footer(vars) });
  }
}
