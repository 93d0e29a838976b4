/*
 * poslib-notebook-links: a JupyterLab 4 plugin that keeps the cell a `#cell-id=<id>` link opens in view.
 *
 * JupyterLab (4.6, every windowing mode) scrolls to a link's cell once, as soon as that cell is in the page, with
 * the cells above it still at their estimated heights; when those render (a figure, a formula, a table) the
 * target moves, and nothing brings it back: README's link to notebook 11's "§4 The verdict" left its heading
 * 700 px below an 800 px window. This plugin wraps each notebook's setFragment (what a clicked link and a
 * /lab/tree/...#cell-id= URL call) and, after JupyterLab's own scroll, puts the cell's top back at the top of the
 * notebook's view each time the layout above it moves it, until it has stayed there HOLD_MS, for at most
 * GIVE_UP_MS. A wheel turn, a click, a key or a touch in the notebook ends it at once: the reader has taken over.
 *
 * Written by hand, not built: JupyterLab loads a prebuilt extension as a webpack module-federation container,
 * `window._JUPYTERLAB[name]` with init(shareScope) and get(module) (see jupyterlab/staging/bootstrap.js and
 * index.js), named in package.json's jupyterlab._build. This plugin imports nothing (it reaches the notebooks
 * through app.docRegistry), so the container shares no module and needs no build step.
 * tests/browser/test_shorter_paths.py opens every README shorter-path link and checks where its heading lands.
 */
(function () {
  'use strict';

  const NAME = 'poslib-notebook-links';
  const CELL_ID = /^#?cell-id=(.+)$/;
  const POLL_MS = 100;
  const HOLD_MS = 1500; // the cell's top at the view's top this long: the layout has settled
  const GIVE_UP_MS = 30000;
  const TOLERANCE_PX = 2;
  const READER_EVENTS = ['wheel', 'pointerdown', 'keydown', 'touchstart'];

  const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

  async function hold(panel, id) {
    let stopped = false;
    const stop = () => {
      stopped = true;
    };
    for (const type of READER_EVENTS) {
      panel.node.addEventListener(type, stop, { capture: true, once: true });
    }
    panel.disposed.connect(stop);
    try {
      await panel.context.ready;
      const notebook = panel.content;
      const start = performance.now();
      let settledSince = null;
      while (!stopped && !notebook.isDisposed && performance.now() - start < GIVE_UP_MS) {
        await sleep(POLL_MS);
        const index = notebook.widgets.findIndex(cell => cell.model.id === id);
        const cell = notebook.widgets[index];
        const view = notebook.outerNode;
        if (!cell || !view || stopped) {
          return;
        }
        if (!cell.node.isConnected || cell.node.getBoundingClientRect().height === 0) {
          // not laid out yet; in 'full' windowing mode a cell away from the view is not in the page at all
          settledSince = null;
          if (notebook.notebookConfig && notebook.notebookConfig.windowingMode === 'full') {
            await notebook.scrollToItem(index, 'start').catch(() => undefined);
          }
          continue;
        }
        // the cell's top at the view's top, never above it (floor: a fraction of a pixel rounds down the page)
        const offset = cell.node.getBoundingClientRect().top - view.getBoundingClientRect().top;
        const before = view.scrollTop;
        const misplaced = offset < 0 || offset > TOLERANCE_PX;
        if (misplaced) {
          view.scrollTop = Math.floor(before + offset);
        }
        if (!misplaced || view.scrollTop === before) {
          // in place, or as near as the scroll range allows
          settledSince = settledSince === null ? performance.now() : settledSince;
          if (performance.now() - settledSince >= HOLD_MS) {
            return;
          }
        } else {
          settledSince = null;
        }
      }
    } finally {
      for (const type of READER_EVENTS) {
        panel.node.removeEventListener(type, stop, { capture: true });
      }
    }
  }

  function watch(panel) {
    const setFragment = panel.setFragment.bind(panel);
    panel.setFragment = fragment => {
      setFragment(fragment);
      let match = null;
      try {
        match = CELL_ID.exec(decodeURIComponent(fragment || ''));
      } catch (error) {
        match = null; // a malformed escape: not a cell link
      }
      if (match) {
        hold(panel, match[1]).catch(error => console.warn(`${NAME}: ${error}`));
      }
    };
  }

  const plugin = {
    id: `${NAME}:plugin`,
    description: 'Keeps the cell a #cell-id= link opens in view while the notebook finishes its layout.',
    autoStart: true,
    activate: app => {
      let watching = false;
      const connect = () => {
        const factory = watching ? null : app.docRegistry.getWidgetFactory('Notebook');
        if (factory) {
          factory.widgetCreated.connect((_, panel) => watch(panel));
          watching = true;
        }
      };
      connect(); // the notebook factory may be registered after this plugin starts
      app.docRegistry.changed.connect(connect);
    }
  };

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init: () => undefined,
    get: module =>
      module === './extension'
        ? Promise.resolve(() => ({ __esModule: true, default: plugin }))
        : Promise.reject(new Error(`${NAME} has no module ${module}`))
  };
})();
