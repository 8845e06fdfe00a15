// hmo memory browser. Plain script, no dependencies. Every memory field is
// untrusted text: it reaches the page only through text nodes and form
// values (h() below), never as markup.
'use strict';

(() => {
  const TIERS = { 1: 'T1 · RAM cache', 2: 'T2 · buffer', 3: 'T3 · archive' };
  const main = document.getElementById('main');
  const notice = document.getElementById('notice');
  let csrf = '';
  let generation = 0; // the current view; older renders stop
  let sticky = false; // the notice outlives the next navigation

  // h builds an element: props are attributes ("class", "text" and "on…"
  // are special), kids are nodes or text.
  function h(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'value') e.value = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of kids.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  class APIError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  // call posts a request to the page's API with the session's CSRF token.
  async function call(path, body) {
    let r;
    try {
      r = await fetch('/ui/api/' + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-HMO-CSRF': csrf },
        body: JSON.stringify(body || {}),
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch (e) {
      throw new APIError(0, 'unavailable', "The daemon does not answer (it stops after a while unused): run 'hmo ui' again.");
    }
    let data = null;
    try { data = await r.json(); } catch (e) { /* not JSON */ }
    if (!r.ok) {
      if (r.status === 401) signedOut();
      const msg = ((data && data.error) || 'HTTP ' + r.status).replace(/^hmo: /, '');
      throw new APIError(r.status, data && data.code, msg.charAt(0).toUpperCase() + msg.slice(1));
    }
    return data;
  }

  function say(text, kind) {
    notice.textContent = text;
    notice.className = 'notice ' + (kind || 'info');
    notice.hidden = !text;
    sticky = kind === 'ok';
  }

  function fail(e) {
    say(e && e.message ? e.message : String(e), 'error');
  }

  function signedOut() {
    generation++;
    document.getElementById('nav').hidden = true;
    document.getElementById('logout').hidden = true;
    main.replaceChildren(h('section', { class: 'gate' },
      h('h1', null, 'Signed out'),
      h('p', null, 'Run this in a terminal for a new login link:'),
      h('pre', null, 'hmo ui')));
  }

  const enc = encodeURIComponent;

  function fmtTime(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return iso;
    return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  }

  function fmtBytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + units[i];
  }

  function roleClass(role) {
    return /^(user|assistant|system|tool)$/.test(role) ? 'role-' + role : 'role-other';
  }

  function timelineLink(scope, session) {
    const p = new URLSearchParams();
    if (scope) p.set('scope', scope);
    if (session) p.set('session', session);
    return '#/timeline?' + p.toString();
  }

  function where(m) {
    return h('span', { class: 'where' },
      h('a', { class: 'chip scope', href: timelineLink(m.scope, ''), title: 'timeline of this scope' }, m.scope || '(no scope)'),
      h('a', { class: 'chip session', href: timelineLink(m.scope, m.session), title: 'timeline of this session' }, m.session || '(no session)'));
  }

  // record renders one memory as a card.
  function record(m, extra) {
    return h('article', { class: 'record ' + roleClass(m.role), 'data-id': m.id },
      h('div', { class: 'meta' },
        h('a', { class: 'rid', href: '#/record/' + m.id }, '#' + m.id),
        h('time', { datetime: m.time }, fmtTime(m.time)),
        m.role ? h('span', { class: 'role' }, m.role) : null,
        m.supersedes ? h('span', { class: 'badge', title: 'replaces #' + m.supersedes }, 'edited') : null,
        extra || null),
      h('p', { class: 'record-text' }, m.text));
  }

  function field(label, input) {
    return h('label', { class: 'field' }, h('span', null, label), input);
  }

  // ---- timeline ----------------------------------------------------------

  async function timeline(p, alive) {
    const scope = p.get('scope') || '';
    const session = p.get('session') || '';
    const order = p.get('order') === 'old' ? 'old' : 'new';
    const day = (v) => (/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(v || '') && !isNaN(new Date(v + 'T00:00:00Z')) ? v : '');
    const from = day(p.get('from'));
    const to = day(p.get('to'));
    const fScope = h('input', { id: 'f-scope', value: scope, placeholder: 'any scope' });
    const fSession = h('input', { id: 'f-session', value: session, placeholder: 'any session' });
    const fFrom = h('input', { id: 'f-from', type: 'date', value: from, title: 'first day (UTC)' });
    const fTo = h('input', { id: 'f-to', type: 'date', value: to, title: 'last day (UTC)' });
    const fOrder = h('select', { id: 'f-order' },
      h('option', { value: 'new', selected: order === 'new' }, 'newest first'),
      h('option', { value: 'old', selected: order === 'old' }, 'oldest first'));
    const form = h('form', {
      class: 'filters',
      onsubmit: (ev) => {
        ev.preventDefault();
        const q = new URLSearchParams();
        if (fScope.value.trim()) q.set('scope', fScope.value.trim());
        if (fSession.value.trim()) q.set('session', fSession.value.trim());
        if (fFrom.value) q.set('from', fFrom.value);
        if (fTo.value) q.set('to', fTo.value);
        if (fOrder.value === 'old') q.set('order', 'old');
        location.hash = '#/timeline?' + q.toString();
      },
    }, field('Scope', fScope), field('Session', fSession), field('From', fFrom), field('To', fTo), field('Order', fOrder),
    h('button', { type: 'submit', id: 'show' }, 'Show'),
    (scope || session || from || to) ? h('a', { class: 'clear', href: '#/timeline' }, 'clear filters') : null);
    const summary = h('p', { class: 'muted', id: 'summary' });
    const list = h('div', { id: 'timeline' });
    const more = h('button', { id: 'more', class: 'more', type: 'button', hidden: true }, order === 'new' ? 'Older memories' : 'Newer memories');
    main.replaceChildren(h('h1', null, 'Timeline'), form, summary, list, more);

    let cursor = '';
    let lastKey = null;
    let group = null;
    let shown = 0;
    async function page() {
      const req = { limit: 25, reverse: order === 'new' };
      if (scope) req.scope = scope;
      if (session) req.session = session;
      if (from) req.from = from + 'T00:00:00Z';
      if (to) req.to = new Date(Date.parse(to + 'T00:00:00Z') + 86400000).toISOString(); // the whole last day
      if (cursor) req.cursor = cursor;
      more.disabled = true;
      const r = await call('list', req);
      if (!alive()) return;
      for (const m of r.memories) {
        const key = (m.scope || '') + '\u0000' + (m.session || '');
        if (key !== lastKey) {
          group = h('section', { class: 'group' }, h('header', { class: 'group-head' }, where(m)));
          list.append(group);
          lastKey = key;
        }
        group.append(record(m));
      }
      shown += r.memories.length;
      cursor = r.next_cursor || '';
      more.hidden = !cursor;
      more.disabled = false;
      summary.textContent = shown === 0
        ? (scope || session || from || to ? 'No memories match these filters.' : 'No memories yet.')
        : shown + ' memories shown' + (cursor ? ', more below' : '') + (r.truncated ? ' (long texts shortened)' : '') + '.';
    }
    more.addEventListener('click', () => page().catch(fail));
    await page();
  }

  // ---- search ------------------------------------------------------------

  async function search(p, alive) {
    const q = p.get('q') || '';
    const scope = p.get('scope') || '';
    const session = p.get('session') || '';
    const k = Math.min(50, Math.max(1, parseInt(p.get('k') || '10', 10) || 10));
    const fq = h('input', { id: 'q', type: 'search', value: q, placeholder: 'what do you want to find?', autofocus: true, class: 'wide' });
    const fScope = h('input', { id: 's-scope', value: scope, placeholder: 'any scope' });
    const fSession = h('input', { id: 's-session', value: session, placeholder: 'any session' });
    const form = h('form', {
      class: 'filters',
      onsubmit: (ev) => {
        ev.preventDefault();
        const u = new URLSearchParams();
        u.set('q', fq.value);
        if (fScope.value.trim()) u.set('scope', fScope.value.trim());
        if (fSession.value.trim()) u.set('session', fSession.value.trim());
        location.hash = '#/search?' + u.toString();
      },
    }, field('Query', fq), field('Scope', fScope), field('Session', fSession), h('button', { type: 'submit', id: 'search-go' }, 'Search'));
    const summary = h('p', { class: 'muted', id: 'summary' });
    const list = h('ol', { id: 'results', class: 'results' });
    const more = h('button', { id: 'more', class: 'more', type: 'button', hidden: true }, 'More results');
    main.replaceChildren(h('h1', null, 'Search'), form, summary, list, more);
    if (!q.trim()) {
      summary.textContent = 'Hybrid search (text and vectors). Each result shows its score and the tier that served it.';
      return;
    }
    let cursor = '';
    let shown = 0;
    async function page() {
      const req = { query: q, k: k };
      if (scope) req.scope = scope;
      if (session) req.session = session;
      if (cursor) req.cursor = cursor;
      more.disabled = true;
      const r = await call('search', req);
      if (!alive()) return;
      for (const m of r.results) {
        shown++;
        const tier = h('span', { class: 'tier tier-' + (TIERS[m.tier] ? m.tier : 0), title: 'the tier that served this result' }, TIERS[m.tier] || 'tier ?');
        const score = h('span', { class: 'score', title: 'fused relevance score' }, (m.score || 0).toFixed(3));
        const li = h('li', { class: 'result' }, record(m, [score, tier, where(m)]));
        list.append(li);
      }
      cursor = r.next_cursor || '';
      more.hidden = !cursor;
      more.disabled = false;
      summary.textContent = shown === 0 ? 'Nothing found.' : shown + ' results' + (r.truncated ? ' (long texts shortened)' : '') + '.';
    }
    more.addEventListener('click', () => page().catch(fail));
    await page();
  }

  // ---- one record: details, edit, forget, history ------------------------

  async function recordView(id, alive) {
    const r = await call('get', { ids: [id], history: true });
    if (!alive()) return;
    if (!r.memories.length) {
      main.replaceChildren(h('h1', null, 'Record #' + id),
        h('p', { id: 'missing', class: 'empty' }, 'No record #' + id + ': it was forgotten, or never existed.'),
        h('p', null, h('a', { href: '#/timeline' }, 'Back to the timeline')));
      return;
    }
    const m = r.memories[0];
    const old = !!m.superseded_by;
    const facts = h('dl', { class: 'facts' },
      h('dt', null, 'Time'), h('dd', null, h('time', { datetime: m.time }, fmtTime(m.time))),
      h('dt', null, 'Scope · session'), h('dd', null, where(m)),
      m.role ? [h('dt', null, 'Role'), h('dd', null, m.role)] : null,
      m.sources && m.sources.length ? [h('dt', null, 'Sources'), h('dd', null, m.sources.join(', '))] : null,
      m.supersedes ? [h('dt', null, 'Replaces'), h('dd', null, h('a', { href: '#/record/' + m.supersedes }, '#' + m.supersedes))] : null);
    const parts = [h('h1', null, 'Record #' + m.id)];
    if (old) {
      parts.push(h('p', { class: 'notice warn' }, 'This is an older version, kept as history. The current one is ',
        h('a', { href: '#/record/' + m.superseded_by }, '#' + m.superseded_by), '.'));
    }
    parts.push(facts, h('p', { class: 'record-text big', id: 'current-text' }, m.text));
    if (!old) {
      const text = h('textarea', { id: 'edit-text', rows: 4, value: m.text });
      const save = h('button', { id: 'save', type: 'submit' }, 'Save as a new version');
      const edit = h('form', {
        class: 'edit',
        onsubmit: async (ev) => {
          ev.preventDefault();
          save.disabled = true;
          try {
            const u = await call('update', { id: m.id, text: text.value });
            say('Saved as #' + u.id + '; #' + u.supersedes + ' is kept as its history.', 'ok');
            location.hash = '#/record/' + u.id;
          } catch (e) {
            fail(e);
            save.disabled = false;
          }
        },
      }, h('h2', null, 'Edit'), text, h('div', { class: 'actions' }, save));
      const confirmBox = h('div', { id: 'confirm', class: 'confirm', hidden: true },
        h('p', null, 'Forget #' + m.id + (r.history && r.history.length ? ' and its ' + r.history.length + ' older version(s)' : '') +
          ' for good? Agents will no longer recall it. This cannot be undone.'),
        h('button', {
          id: 'confirm-forget', class: 'danger', type: 'button',
          onclick: async () => {
            try {
              const d = await call('delete', { ids: [m.id] });
              say(d.deleted ? 'Forgot #' + m.id + '.' : '#' + m.id + ' was already gone.', 'ok');
              location.hash = '#/timeline';
            } catch (e) { fail(e); }
          },
        }, 'Forget for good'),
        h('button', { type: 'button', class: 'quiet', onclick: () => { confirmBox.hidden = true; } }, 'Cancel'));
      const forget = h('section', { class: 'forget' }, h('h2', null, 'Forget'),
        h('button', { id: 'forget', class: 'danger-outline', type: 'button', onclick: () => { confirmBox.hidden = false; } }, 'Forget this memory…'),
        confirmBox);
      parts.push(edit, forget);
    }
    const hist = h('section', { id: 'history' }, h('h2', null, 'History'));
    if (!r.history || !r.history.length) {
      hist.append(h('p', { class: 'muted' }, 'No older versions.'));
    } else {
      for (const v of r.history) {
        hist.append(h('div', { class: 'version' }, record(v, h('span', { class: 'muted' }, 'replaced by #' + v.superseded_by))));
      }
    }
    parts.push(hist);
    main.replaceChildren(...parts);
  }

  // ---- persona -----------------------------------------------------------

  function stat(label, value, id, cls) {
    return h('div', { class: 'stat' }, h('div', { class: 'stat-value' + (cls ? ' ' + cls : ''), id: id }, value), h('div', { class: 'stat-label' }, label));
  }

  async function personaView(alive) {
    const p = await call('persona');
    if (!alive()) return;
    const parts = [h('h1', null, 'Persona')];
    if (!p.enabled) {
      parts.push(h('p', { class: 'empty', id: 'no-persona' }, 'This store runs in flat mode: it keeps no persona.'));
    } else if (!p.updates) {
      parts.push(h('p', { class: 'empty', id: 'no-persona' }, 'No persona yet: it forms as memories arrive.'));
    } else {
      parts.push(h('div', { class: 'stats-row' },
        stat('drift from anchor', p.drift.toFixed(4), 'drift'),
        stat('gate firings', p.gate_firings),
        stat('memories observed', p.updates),
        stat('anchor set', p.anchor_time ? fmtTime(p.anchor_time) : '—', 'anchor', 'date')));
      const terms = (p.profile && p.profile.terms) || [];
      const max = terms.reduce((a, t) => Math.max(a, t.weight), 0) || 1;
      parts.push(h('h2', null, 'Salient terms'),
        h('ul', { class: 'terms', id: 'terms' }, terms.map((t) => h('li', { class: 'term w' + Math.min(4, Math.round(4 * t.weight / max)), title: 'weight ' + t.weight.toFixed(3) }, t.text))));
      const stmts = (p.profile && p.profile.statements) || [];
      parts.push(h('h2', null, 'Key statements'),
        stmts.length ? h('ul', { class: 'statements' }, stmts.map((s) => h('li', null, h('span', { class: 'record-text' }, s.text), h('span', { class: 'muted' }, ' importance ' + s.importance.toFixed(2)))))
          : h('p', { class: 'muted' }, 'None yet.'));
      if (p.text) parts.push(h('h2', null, 'Profile as agents get it ', h('span', { class: 'muted' }, '(' + p.source + ')')), h('pre', { class: 'profile' }, p.text));
      const hist = p.history || [];
      if (hist.length) {
        parts.push(h('h2', null, 'Drift-gate firings'), h('table', { class: 'grid' },
          h('thead', null, h('tr', null, h('th', null, 'When'), h('th', null, 'Update'), h('th', null, 'Drift'), h('th', null, 'Top terms'))),
          h('tbody', null, hist.slice().reverse().map((s) => h('tr', null,
            h('td', null, fmtTime(s.time)), h('td', { class: 'num' }, s.update), h('td', { class: 'num' }, s.drift.toFixed(4)), h('td', null, (s.terms || []).join(', ')))))));
      }
    }
    main.replaceChildren(...parts);
  }

  // ---- statistics --------------------------------------------------------

  async function statsView(alive) {
    const s = await call('stats');
    if (!alive()) return;
    const t = s.tiers || {};
    const served = t.served || [0, 0, 0, 0];
    const total = served.reduce((a, b) => a + b, 0);
    const rows = [1, 2, 3].map((n) => h('tr', { class: 'tier-row' },
      h('th', null, h('span', { class: 'tier tier-' + n }, TIERS[n])),
      h('td', { class: 'num', id: 'served-' + n }, served[n] || 0),
      h('td', null, h('progress', { max: total || 1, value: served[n] || 0 })),
      h('td', { class: 'num' }, n === 1 ? t.tier1 || 0 : n === 2 ? t.tier2 || 0 : s.records)));
    main.replaceChildren(h('h1', null, 'Statistics'),
      h('div', { class: 'stats-row' },
        stat('memories', s.records, 'stat-records'),
        stat('sessions', s.sessions),
        stat('scopes', s.scopes),
        stat('on disk', fmtBytes(s.disk_bytes || 0))),
      h('h2', null, 'Tiers'),
      h('p', { class: 'muted' }, (t.queries || 0) + (t.queries === 1 ? ' query' : ' queries') + ' since the daemon started; each is answered by the first tier that suffices.'),
      h('table', { class: 'grid', id: 'tiers' },
        h('thead', null, h('tr', null, h('th', null, 'Tier'), h('th', null, 'Queries served'), h('th', null, ''), h('th', null, 'Memories held'))),
        h('tbody', null, rows)),
      h('div', { class: 'stats-row small' },
        stat('candidates scored', t.scored || 0),
        stat('promotions', t.promotions || 0),
        stat('demotions', t.demotions || 0),
        stat('gate firings', t.gate_firings || 0)),
      h('h2', null, 'Store'),
      h('dl', { class: 'facts' },
        h('dt', null, 'Directory'), h('dd', null, s.dir),
        h('dt', null, 'Embedder'), h('dd', null, s.embedder + ' (' + s.dims + ' dims)'),
        h('dt', null, 'Index layout'), h('dd', null, s.index_layout),
        h('dt', null, 'Language model'), h('dd', null, s.llm ? 'on, ' + (s.enrich_pending || 0) + ' memories waiting' : 'off (embedded defaults)'),
        s.enrich_error ? [h('dt', null, 'Last model error'), h('dd', null, s.enrich_error)] : null));
  }

  // ---- routing -----------------------------------------------------------

  async function route() {
    const my = ++generation;
    const alive = () => my === generation;
    document.body.dataset.ready = '';
    const raw = location.hash.replace(/^#\/?/, '');
    const i = raw.indexOf('?');
    const path = i < 0 ? raw : raw.slice(0, i);
    const params = new URLSearchParams(i < 0 ? '' : raw.slice(i + 1));
    const view = path.split('/')[0] || 'timeline';
    for (const a of document.querySelectorAll('#nav a')) {
      a.classList.toggle('active', a.dataset.view === view || (view === 'record' && a.dataset.view === 'timeline'));
    }
    try {
      if (view === 'timeline') await timeline(params, alive);
      else if (view === 'search') await search(params, alive);
      else if (view === 'persona') await personaView(alive);
      else if (view === 'stats') await statsView(alive);
      else if (view === 'record' && /^[0-9]+$/.test(path.split('/')[1] || '')) await recordView(Number(path.split('/')[1]), alive);
      else main.replaceChildren(h('h1', null, 'Not found'), h('p', null, h('a', { href: '#/timeline' }, 'Back to the timeline')));
    } catch (e) {
      if (alive()) fail(e);
    }
    if (alive()) document.body.dataset.ready = view;
  }

  async function start() {
    document.getElementById('logout').addEventListener('click', async () => {
      try { await call('logout'); } catch (e) { /* signed out either way */ }
      signedOut();
    });
    window.addEventListener('hashchange', () => {
      if (sticky) sticky = false;
      else say('');
      route();
    });
    try {
      const r = await fetch('/ui/api/session', { credentials: 'same-origin', cache: 'no-store' });
      if (r.status === 401) { signedOut(); return; }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      csrf = (await r.json()).csrf;
    } catch (e) {
      fail(e);
      return;
    }
    await route();
  }

  start();
})();
