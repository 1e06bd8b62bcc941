// Kept ETags (docs/rendering.md, "Fresh ETags without asking"): an unchanged document answers its ETag
// (304) from memory, without asking the documents and identity services; an entry is used only under
// the revision (the change counters, read first) it was kept under, so once a change is acknowledged —
// its counter bumped before that — no request answers the old ETag. Interleavings driven by latches.
import { GrpcDocumentSource } from '../../services/rendering/adapters/grpc-document-source';
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { BlobStore } from '../../services/shared/blobs/port';
import { ChangeCounters } from '../../services/shared/change-counters';
import { DocumentSource, PrintableDocument, Workspace } from '../../services/rendering/ports/document-source';
import { fail } from '../../services/shared/errors';
import { Tenant } from '../../services/shared/tenant';
import { printable, workspace } from './rendering.fixtures';

const tenant: Tenant = { account_id: 7, livemode: true };

/** A latch: `wait()` blocks until `open()`; `reached` resolves once someone waits. */
function latch() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  return { wait: () => (reached(), opened), open: () => open(), reached: arrived };
}

/**
 * The owners (documents, identity) as the rendering service sees them: current state, change counters
 * bumped by `write` after the state changed (as countingWrites does), and hooks on the reads.
 */
function owners(options: { revisions?: boolean } = {}) {
  const state = { doc: printable({ status: 'draft', number: null }), ws: workspace(), owner: tenant, counters: { doc: 0, account: 0 } };
  const calls = { document: 0, workspace: 0, revision: 0 };
  const hooks: { workspaceRead?: () => Promise<void> } = {};
  const source: DocumentSource = {
    async document(t, _kind, id) {
      calls.document++;
      if (t.account_id !== state.owner.account_id || t.livemode !== state.owner.livemode || id !== state.doc.id) throw fail.notFound('invoice');
      return state.doc;
    },
    async workspace() {
      calls.workspace++;
      const answer = state.ws; // what the owner answers is what it holds when asked
      await hooks.workspaceRead?.();
      return answer;
    },
    logo: async () => null,
    ...(options.revisions === false
      ? {}
      : {
          async revision() {
            calls.revision++;
            return `${state.counters.doc}.${state.counters.account}`;
          },
        }),
  };
  const write = {
    doc(change: Partial<PrintableDocument>) {
      state.doc = { ...state.doc, ...change };
      state.counters.doc++;
    },
    workspace(change: Partial<Workspace['identity']>) {
      state.ws = { ...state.ws, identity: { ...state.ws.identity, ...change } };
      state.counters.account++;
    },
  };
  return { state, calls, hooks, source, write };
}

function pdfsOver(source: DocumentSource, options: ConstructorParameters<typeof Pdfs>[1] = {}) {
  const stored = new Map<string, Buffer>();
  return new Pdfs(
    {
      source,
      template: { version: 'v1', html: (view) => `<h1>${view.supplier.name}</h1>` },
      renderer: { render: async (html) => Buffer.from(`%PDF ${html}`), close: async () => undefined },
      store: { get: async (key) => stored.get(key) ?? null, put: async (key, pdf) => void stored.set(key, pdf) },
    },
    options,
  );
}

describe('Kept ETags: an unchanged document answers from memory', () => {
  it('a second request, and its 304, ask neither the documents nor the identity service', async () => {
    const o = owners();
    const pdfs = pdfsOver(o.source);
    const { etag } = await pdfs.pdf(tenant, 'invoice', 42);
    const asked = { document: o.calls.document, workspace: o.calls.workspace };
    expect(await pdfs.pdf(tenant, 'invoice', 42, etag)).toMatchObject({ notModified: true, etag });
    expect((await pdfs.pdf(tenant, 'invoice', 42)).source).toBe('store');
    expect({ document: o.calls.document, workspace: o.calls.workspace }).toEqual(asked);
  });

  it('without revisions nothing is kept: every request asks both services', async () => {
    const o = owners({ revisions: false });
    const pdfs = pdfsOver(o.source);
    const { etag } = await pdfs.pdf(tenant, 'invoice', 42);
    await pdfs.pdf(tenant, 'invoice', 42, etag);
    expect(o.calls).toMatchObject({ document: 2, workspace: 2 });
  });

  it('another tenant never gets the kept answer (404, asked again)', async () => {
    const o = owners();
    const pdfs = pdfsOver(o.source);
    const { etag } = await pdfs.pdf(tenant, 'invoice', 42);
    await expect(pdfs.pdf({ account_id: 8, livemode: true }, 'invoice', 42, etag)).rejects.toMatchObject({ code: 'resource_not_found' });
    await expect(pdfs.pdf({ account_id: 7, livemode: false }, 'invoice', 42, etag)).rejects.toMatchObject({ code: 'resource_not_found' });
  });
});

describe('Kept ETags: every acknowledged change is seen', () => {
  it('a document change (its counter bumped) → asked again, a new ETag; the old one no longer 304s', async () => {
    const o = owners();
    const pdfs = pdfsOver(o.source);
    const { etag } = await pdfs.pdf(tenant, 'invoice', 42);
    o.write.doc({ note: 'changed' });
    const after = await pdfs.pdf(tenant, 'invoice', 42, etag);
    expect(after.notModified).toBe(false);
    expect(after.etag).not.toBe(etag);
  });

  it('a supplier identity change of a draft → a new ETag and the new name printed', async () => {
    const o = owners();
    const pdfs = pdfsOver(o.source);
    const { etag } = await pdfs.pdf(tenant, 'invoice', 42);
    o.write.workspace({ name: 'Renamed s.r.o.' });
    const after = await pdfs.pdf(tenant, 'invoice', 42, etag);
    expect(after).toMatchObject({ notModified: false, source: 'rendered' });
    expect(after.pdf!.toString()).toContain('Renamed s.r.o.');
  });

  it('a deleted document answers 404, not its kept ETag', async () => {
    const o = owners();
    const pdfs = pdfsOver(o.source);
    const { etag } = await pdfs.pdf(tenant, 'invoice', 42);
    o.write.doc({ id: -1 }); // gone: the owner answers NOT_FOUND, the delete bumped the counter
    await expect(pdfs.pdf(tenant, 'invoice', 42, etag)).rejects.toMatchObject({ code: 'resource_not_found' });
  });

  it('a lookup that read the old identity while the change was acknowledged is not kept for later requests', async () => {
    const o = owners();
    const pdfs = pdfsOver(o.source);
    const { etag: old } = await pdfs.pdf(tenant, 'invoice', 42);
    o.write.doc({ note: 'edited' }); // forces the next request to ask again
    const held = latch();
    o.hooks.workspaceRead = held.wait;
    // Request A reads the revision, then the owner answers the *old* identity and A is held there…
    const a = pdfs.pdf(tenant, 'invoice', 42);
    await held.reached;
    // …while the identity change is stored and its counter bumped: acknowledged from here on.
    o.write.workspace({ name: 'Renamed s.r.o.' });
    o.hooks.workspaceRead = undefined;
    held.open();
    const raced = await a; // A raced the change: it may answer the old identity
    expect(raced.pdf!.toString()).not.toContain('Renamed');
    // Every request after the acknowledgement sees the change, though A kept what it read.
    const b = await pdfs.pdf(tenant, 'invoice', 42, raced.etag);
    expect(b.notModified).toBe(false);
    expect(b.etag).not.toBe(raced.etag);
    expect(b.etag).not.toBe(old);
    expect(b.pdf!.toString()).toContain('Renamed s.r.o.');
  });

  it('an older lookup finishing last does not make a newer change invisible', async () => {
    const o = owners();
    const pdfs = pdfsOver(o.source);
    await pdfs.pdf(tenant, 'invoice', 42);
    o.write.doc({ note: 'v2' });
    const held = latch();
    o.hooks.workspaceRead = held.wait;
    const slow = pdfs.pdf(tenant, 'invoice', 42); // revision r2, held
    await held.reached;
    o.hooks.workspaceRead = undefined;
    o.write.doc({ note: 'v3' });
    const fresh = await pdfs.pdf(tenant, 'invoice', 42); // revision r3: kept
    held.open();
    await slow; // kept under r2, overwriting r3's entry
    const again = await pdfs.pdf(tenant, 'invoice', 42, fresh.etag);
    expect(again.notModified).toBe(true); // v3 is what is printed now: the r2 entry was not used
  });
});

describe('Kept ETags: bounded', () => {
  it('an entry lives at most the TTL from its lookup, then both services are asked again', async () => {
    let now = 1_000;
    const o = owners();
    const pdfs = pdfsOver(o.source, { cacheTtlMs: 100, now: () => now });
    const { etag } = await pdfs.pdf(tenant, 'invoice', 42);
    now += 99;
    await pdfs.pdf(tenant, 'invoice', 42, etag);
    expect(o.calls.document).toBe(1);
    now += 1;
    await pdfs.pdf(tenant, 'invoice', 42, etag);
    expect(o.calls.document).toBe(2);
  });

  it('keeps at most cacheMax documents, the least recently used leaving first', async () => {
    const o = owners();
    const docs = new Map([1, 2, 3].map((id) => [id, printable({ id })]));
    const source: DocumentSource = { ...o.source, document: async (_t, _k, id) => (o.calls.document++, docs.get(id)!) };
    const pdfs = pdfsOver(source, { cacheMax: 2 });
    await pdfs.pdf(tenant, 'invoice', 1);
    await pdfs.pdf(tenant, 'invoice', 2);
    await pdfs.pdf(tenant, 'invoice', 1); // 1 used last: 2 is the least recently used
    await pdfs.pdf(tenant, 'invoice', 3);
    expect(o.calls.document).toBe(3);
    await pdfs.pdf(tenant, 'invoice', 1);
    expect(o.calls.document).toBe(3);
    await pdfs.pdf(tenant, 'invoice', 2);
    expect(o.calls.document).toBe(4);
  });
});

describe('Kept ETags: the revision of the gRPC source', () => {
  const blobs = {} as BlobStore;
  it("is the document's and the workspace's counters; without them, or with the store unreachable, none (nothing kept)", async () => {
    const counters: ChangeCounters = { bump: async () => undefined, read: async (scope, id) => (scope === 'documents' ? id * 10 : id) };
    expect(await new GrpcDocumentSource({}, blobs, counters).revision(tenant, 'invoice', 42)).toBe('420.7');
    expect(await new GrpcDocumentSource({}, blobs).revision(tenant, 'invoice', 42)).toBeNull();
    const down: ChangeCounters = { bump: async () => undefined, read: async () => Promise.reject(new Error('store down')) };
    expect(await new GrpcDocumentSource({}, blobs, down).revision(tenant, 'invoice', 42)).toBeNull();
  });
});
