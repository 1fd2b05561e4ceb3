/**
 * The report page's own styles and script (html.ts inlines them). The script is plain browser
 * JavaScript kept as text: it runs in the page, never in Node. It reads the JSON the page
 * carries (#report-data), draws with `window.LightweightCharts` (inlined before it), and leaves
 * `window.tradeReport` for whoever drives the page (the browser test): the charts' series and the
 * trade selected.
 */

export const PAGE_STYLE = `
:root { --bg: #ffffff; --fg: #131722; --muted: #5d606b; --line: #e0e3eb; --panel: #f8f9fd; --up: #089981; --down: #f23645; --accent: #2962ff; --select: #fff3c4; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #131722; --fg: #d1d4dc; --muted: #9598a1; --line: #2a2e39; --panel: #1e222d; --up: #22ab94; --down: #f7525f; --accent: #5b9cf6; --select: #3a3520; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header, main, footer { max-width: 1200px; margin: 0 auto; padding: 0 16px; }
header h1 { margin: 16px 0 4px; font-size: 22px; }
#headline, .hint, footer { color: var(--muted); }
footer { padding: 24px 16px; font-size: 12px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
.chart { position: relative; height: 300px; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.chart.tall { height: 380px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: var(--panel); position: sticky; top: 0; font-weight: 600; }
#trades th { cursor: pointer; user-select: none; }
#trades th[aria-sort="ascending"]::after { content: " ▲"; }
#trades th[aria-sort="descending"]::after { content: " ▼"; }
#trades tbody tr { cursor: pointer; }
#trades tbody tr:hover { background: var(--panel); }
#trades tbody tr.selected { background: var(--select); }
.scroll { overflow-x: auto; }
.win { color: var(--up); }
.loss { color: var(--down); }
#notes li { color: var(--muted); }
`;

export const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var LW = window.LightweightCharts;
  var dark = window.matchMedia('(prefers-color-scheme: dark)');
  var charts = [];
  var state = { equity: null, drawdown: null, prices: {}, selected: null };

  function css(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }
  function theme() {
    return {
      layout: { background: { color: css('--bg') }, textColor: css('--fg'), fontFamily: 'system-ui, sans-serif' },
      grid: { vertLines: { color: css('--line') }, horzLines: { color: css('--line') } },
      rightPriceScale: { borderColor: css('--line') },
      timeScale: { borderColor: css('--line'), timeVisible: true, secondsVisible: false },
    };
  }
  function chart(el) {
    var c = LW.createChart(el, Object.assign({ autoSize: true }, theme()));
    charts.push(c);
    return c;
  }
  dark.addEventListener('change', function () {
    charts.forEach(function (c) { c.applyOptions(theme()); });
    Object.keys(state.prices).forEach(function (i) { paintMarkers(i); });
  });

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function table(section, id) {
    var t = el('table', id ? { id: id } : {});
    var head = el('thead'); var tr = el('tr');
    section.header.forEach(function (h) { tr.appendChild(el('th', {}, h)); });
    head.appendChild(tr); t.appendChild(head);
    var body = el('tbody');
    section.rows.forEach(function (row) {
      var r = el('tr');
      row.forEach(function (cell) { r.appendChild(el('td', {}, cell)); });
      body.appendChild(r);
    });
    t.appendChild(body);
    var wrap = el('div', { class: 'scroll' }); wrap.appendChild(t);
    return wrap;
  }
  function sectionNamed(title) { return data.sections.filter(function (s) { return s.title.indexOf(title) === 0; })[0]; }

  document.getElementById('headline').textContent = data.headline;
  document.getElementById('figures').appendChild(table(sectionNamed('Performance')));

  // The equity curve, and its drawdown in a pane beneath.
  var eqChart = chart(document.getElementById('equity'));
  state.equity = eqChart.addSeries(LW.BaselineSeries, {
    baseValue: { type: 'price', price: 0 }, lineWidth: 2,
    topLineColor: css('--up'), bottomLineColor: css('--down'),
    topFillColor1: 'rgba(8, 153, 129, 0.28)', topFillColor2: 'rgba(8, 153, 129, 0.05)',
    bottomFillColor1: 'rgba(242, 54, 69, 0.05)', bottomFillColor2: 'rgba(242, 54, 69, 0.28)',
    priceFormat: { type: 'price', precision: 2, minMove: 0.01 }, title: 'equity',
  });
  state.equity.setData(data.equity.map(function (p) { return { time: p.time, value: p.equity }; }));
  state.drawdown = eqChart.addSeries(LW.AreaSeries, {
    lineColor: css('--down'), topColor: 'rgba(242, 54, 69, 0.05)', bottomColor: 'rgba(242, 54, 69, 0.35)', lineWidth: 1,
    invertFilledArea: true, priceFormat: { type: 'price', precision: 2, minMove: 0.01 }, title: 'drawdown',
  }, 1);
  state.drawdown.setData(data.equity.map(function (p) { return { time: p.time, value: p.drawdown }; }));
  var panes = eqChart.panes();
  if (panes[1]) panes[1].setHeight(110);
  eqChart.timeScale().fitContent();

  // A price chart per instrument, every entry and exit marked.
  var prices = document.getElementById('prices');
  data.charts.forEach(function (c) {
    prices.appendChild(el('h3', {}, c.instrument + (c.kind === 'bars' ? ' (' + c.periodMinutes + '-minute bars)' : ' (fills only: no bars were available)')));
    var box = el('div', { class: 'chart', id: 'chart-' + c.instrument.replace(/[^A-Za-z0-9]+/g, '-') });
    prices.appendChild(box);
    var pc = chart(box);
    var series;
    if (c.kind === 'bars') {
      series = pc.addSeries(LW.CandlestickSeries, { upColor: css('--up'), downColor: css('--down'), wickUpColor: css('--up'), wickDownColor: css('--down'), borderVisible: false });
      series.setData(c.bars);
    } else {
      series = pc.addSeries(LW.LineSeries, { color: css('--accent'), lineWidth: 2, pointMarkersVisible: true });
      series.setData(c.points);
    }
    state.prices[c.instrument] = { chart: pc, series: series, markers: LW.createSeriesMarkers(series, []), lines: [], box: box };
    paintMarkers(c.instrument);
    pc.timeScale().fitContent();
  });

  function buys(side, entry) { return (side === 'Long') === entry; }
  function markersOf(trade, selected) {
    var out = [];
    [['entry', trade.entry], ['exit', trade.exit]].forEach(function (pair) {
      var at = pair[1];
      if (!at) return;
      var buy = buys(trade.side, pair[0] === 'entry');
      out.push({
        id: 't' + trade.number + '-' + pair[0], time: at.t, price: at.price,
        position: buy ? 'belowBar' : 'aboveBar', shape: buy ? 'arrowUp' : 'arrowDown',
        color: selected ? css('--accent') : (buy ? css('--up') : css('--down')),
        size: selected ? 2 : 1,
        text: selected ? '#' + trade.number + ' ' + pair[0] + ' ' + at.price : undefined,
      });
    });
    return out;
  }
  function paintMarkers(instrument) {
    var p = state.prices[instrument];
    var all = [];
    var drawn = {};
    data.trades.forEach(function (t) {
      if (t.instrument !== instrument) return;
      markersOf(t, state.selected === t.number).forEach(function (m) {
        // Trades that share a fill (a partial close, a reverse) share its mark, unless one is selected.
        var key = m.time + ' ' + m.price + ' ' + m.shape;
        if (m.size === 1 && drawn[key]) return;
        drawn[key] = true;
        all.push(m);
      });
    });
    all.sort(function (a, b) { return a.time - b.time || a.size - b.size; });
    p.markers.setMarkers(all);
  }

  // The trades: sortable, and a click marks the trade on its chart.
  var tradesSection = sectionNamed('Trades');
  var wrap = table(tradesSection, 'trades-table');
  document.getElementById('trades').appendChild(wrap);
  var tbody = wrap.querySelector('tbody');
  Array.prototype.forEach.call(tbody.rows, function (row, i) {
    var trade = data.trades[i];
    row.dataset.trade = String(trade.number);
    var net = row.cells[row.cells.length - 1];
    if (trade.net !== null) net.className = trade.net > 0 ? 'win' : trade.net < 0 ? 'loss' : '';
    row.addEventListener('click', function () { select(trade.number); });
  });
  var headers = wrap.querySelectorAll('th');
  Array.prototype.forEach.call(headers, function (th, column) {
    th.addEventListener('click', function () {
      var ascending = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(headers, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
      var rows = Array.prototype.slice.call(tbody.rows);
      function key(row) {
        var text = row.cells[column].textContent;
        var n = Number(text.replace(/[%,]/g, ''));
        return text !== '' && text !== '\u2014' && !isNaN(n) ? n : text;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return ascending ? order : -order;
      });
      rows.forEach(function (r) { tbody.appendChild(r); });
    });
  });

  function select(number) {
    var trade = data.trades.filter(function (t) { return t.number === number; })[0];
    if (!trade) return;
    var previous = state.selected;
    state.selected = number;
    Array.prototype.forEach.call(tbody.rows, function (r) {
      var on = r.dataset.trade === String(number);
      r.classList.toggle('selected', on);
      r.setAttribute('aria-selected', on ? 'true' : 'false');
    });
    var before = data.trades.filter(function (t) { return t.number === previous; })[0];
    if (before && before.instrument !== trade.instrument) paintMarkers(before.instrument);
    var p = state.prices[trade.instrument];
    if (!p) return;
    paintMarkers(trade.instrument);
    p.lines.forEach(function (l) { p.series.removePriceLine(l); });
    p.lines = [];
    [['entry', trade.entry], ['exit', trade.exit]].forEach(function (pair) {
      if (pair[1]) p.lines.push(p.series.createPriceLine({ price: pair[1].price, color: css('--accent'), lineWidth: 1, lineStyle: 2, axisLabelVisible: true, title: '#' + number + ' ' + pair[0] }));
    });
    var from = trade.entry ? trade.entry.t : trade.exit.t;
    var pad = Math.max(600, (trade.exit.t - from) / 2);
    try { p.chart.timeScale().setVisibleRange({ from: from - pad, to: trade.exit.t + pad }); } catch (e) { /* a range outside the data: the chart keeps its own */ }
    p.box.scrollIntoView({ block: 'nearest' });
  }

  ['Open positions', 'By trading day'].forEach(function (title, i) {
    var s = sectionNamed(title);
    if (!s) return;
    var host = document.getElementById(i === 0 ? 'open' : 'days');
    host.appendChild(el('h2', {}, s.title));
    host.appendChild(table(s));
  });
  if (data.notes.length > 0) {
    var notes = document.getElementById('notes');
    notes.appendChild(el('h2', {}, 'Notes'));
    var ul = el('ul');
    data.notes.forEach(function (n) { ul.appendChild(el('li', {}, n)); });
    notes.appendChild(ul);
  }

  window.tradeReport = {
    equity: state.equity,
    drawdown: state.drawdown,
    prices: state.prices,
    select: select,
    selected: function () {
      if (state.selected === null) return null;
      var trade = data.trades.filter(function (t) { return t.number === state.selected; })[0];
      var p = state.prices[trade.instrument];
      return {
        number: state.selected,
        instrument: trade.instrument,
        markers: p ? p.markers.markers().filter(function (m) { return m.id.indexOf('t' + state.selected + '-') === 0; }) : [],
        priceLines: p ? p.lines.map(function (l) { return l.options().price; }) : [],
      };
    },
  };
})();
`;
