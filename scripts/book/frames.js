// The book's interactive figures without a kernel (scripts/build_book.py --frames, scripts/book/book_frames.py).
// Each .book-live block carries its controls as plain inputs and, in a JSON script, the frames the notebook's own
// LivePlot drew at build time. Moving a control shows the frame of that sampled value and the value it was drawn at.
// No network, no framework; native inputs, so the keyboard works as it does for any form.
"use strict";
(function () {
  const MENUS = ["dropdown", "checkbox"];

  function setup(root) {
    const data = JSON.parse(root.querySelector("script.book-live-data").textContent);
    const controls = data.controls;
    const img = root.querySelector("img.book-live-frame");
    const full = root.querySelector("a.book-full");
    const baseAlt = img.getAttribute("data-alt") || img.alt;
    // the page's words for a range's count and the alt text's list of values (the Chinese edition sets them)
    const words = data.words || { values: "values", open: " (", sep: "; ", close: ")" };
    const folder = img.getAttribute("src").replace(/[^/]*$/, "");  // "frames/", or "../frames/" in zh/
    const start = data.start.split(",").map(Number);
    const state = {};
    const rows = {};
    controls.forEach((c, i) => {
      state[c.name] = start[i];
      rows[c.name] = root.querySelector('.book-control[data-name="' + CSS.escape(c.name) + '"]');
    });
    const isMenu = (c) => MENUS.includes(c.kind);
    const context = () => controls.filter(isMenu).map((c) => state[c.name]).join(",");
    const key = () => controls.map((c) => state[c.name]).join(",");

    // A slider's sampled values for the current menu choice (the range can differ between choices).
    const sliderData = (c) => data.contexts[context()][c.name];

    function nearest(numbers, x) {
      let best = 0;
      numbers.forEach((v, i) => { if (Math.abs(v - x) < Math.abs(numbers[best] - x)) best = i; });
      return best;
    }

    // Sliders drawn jointly (a plot's frame_joint): every combination exists, so moving one keeps the others.
    const joint = data.joint || [];
    const groupOf = (name) => joint.find((g) => g.includes(name)) || [name];

    function startsHere(except) {
      // one slider at a time: the sliders other than `except` (and its joint group) go back to their starts
      const keep = except === null ? [] : groupOf(except);
      controls.forEach((c) => { if (!isMenu(c) && !keep.includes(c.name)) state[c.name] = sliderData(c).start; });
    }

    function setTicks(input, count) {
      // one tick mark on the track per sampled value (the list changes with a menu's choice)
      const list = input.list;
      if (!list || list.options.length === count) return;
      list.textContent = "";
      for (let i = 0; i < count; i++) { const o = document.createElement("option"); o.value = String(i); list.appendChild(o); }
    }

    function show() {
      const frame = data.frames[key()];
      if (!frame) return false;
      img.src = folder + data.files[frame[0]];
      if (full) full.href = img.getAttribute("src");
      const described = [];
      controls.forEach((c, i) => {
        const input = rows[c.name].querySelector(".book-input");
        if (c.kind === "dropdown") input.value = String(state[c.name]);
        else if (c.kind === "checkbox") input.checked = state[c.name] === 1;
        else {
          const s = sliderData(c);
          input.max = String(s.labels.length - 1);
          setTicks(input, s.labels.length);
          input.value = String(state[c.name]);
          input.setAttribute("aria-valuetext", frame[1][i]);
          rows[c.name].querySelector(".book-value").textContent = frame[1][i];
          rows[c.name].querySelector(".book-range").textContent =
            s.labels[0] + " … " + s.labels[s.labels.length - 1] + ", " + s.labels.length + " " + words.values;
        }
        described.push(c.label + " " + frame[1][i]);
      });
      img.alt = baseAlt + words.open + described.join(words.sep) + words.close;
      root.setAttribute("data-key", key());
      return true;
    }

    function moved(c, input) {
      if (c.kind === "dropdown") {
        const before = {};
        controls.forEach((s) => { if (!isMenu(s)) before[s.name] = sliderData(s).numbers[state[s.name]]; });
        state[c.name] = Number(input.value);
        remapSliders(before);
      } else if (c.kind === "checkbox") {
        const before = {};
        controls.forEach((s) => { if (!isMenu(s)) before[s.name] = sliderData(s).numbers[state[s.name]]; });
        state[c.name] = input.checked ? 1 : 0;
        remapSliders(before);
      } else {
        state[c.name] = Number(input.value);
      }
      if (show()) return;
      startsHere(isMenu(c) ? null : c.name);
      if (!show()) { controls.forEach((s, i) => { state[s.name] = start[i]; }); show(); }
    }

    function remapSliders(before) {
      // after a menu change each slider keeps the sampled value nearest to the one it showed
      controls.forEach((s) => {
        if (isMenu(s)) return;
        const numbers = sliderData(s).numbers;
        state[s.name] = s.kind === "selection" ? Math.min(state[s.name], numbers.length - 1) : nearest(numbers, before[s.name]);
      });
    }

    controls.forEach((c) => {
      const input = rows[c.name].querySelector(".book-input");
      input.addEventListener(c.kind === "slider" || c.kind === "log_slider" || c.kind === "selection" ? "input" : "change",
        () => moved(c, input));
    });
    root.querySelector(".book-reset").addEventListener("click", () => {
      controls.forEach((c, i) => { state[c.name] = start[i]; });
      show();
    });
    show();
  }

  function setupAll() { document.querySelectorAll(".book-live").forEach(setup); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupAll);
  else setupAll();
})();
