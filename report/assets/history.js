(function () {
  var element = document.getElementById('ditbench-history');
  if (!element || typeof Chart === 'undefined') return;
  var charts = JSON.parse(element.textContent);
  var marks = {
    id: 'historyMarks',
    afterDatasetsDraw: function (chart) {
      var c = chart.options.history, ctx = chart.ctx, x = chart.scales.x, y = chart.scales.y;
      var meta = chart.getDatasetMeta(0), area = chart.chartArea;
      ctx.save();
      ctx.beginPath();
      ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
      ctx.clip();
      meta.data.forEach(function (point, i) {
        var lo = c.low[i], hi = c.high[i];
        if (lo === null || hi === null) return;
        ctx.strokeStyle = '#555'; ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(point.x, y.getPixelForValue(hi));
        ctx.lineTo(point.x, y.getPixelForValue(lo));
        ctx.stroke();
      });
      c.changes.forEach(function (change) {
        var px = (x.getPixelForValue(change.before) + x.getPixelForValue(change.after)) / 2;
        ctx.strokeStyle = change.pct > 0 ? '#b42318' : '#1a7f37';
        ctx.setLineDash([5, 4]); ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(px, y.top); ctx.lineTo(px, y.bottom); ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = ctx.strokeStyle; ctx.font = '12px system-ui, sans-serif';
        ctx.fillText((change.pct > 0 ? '+' : '') + change.pct.toFixed(1) + '%', px + 3,
                     y.top + 12);
      });
      ctx.restore();
    }
  };
  charts.forEach(function (c) {
    var canvas = document.getElementById(c.id);
    if (!canvas) return;
    var colours = c.use.map(function (u) { return u === 'used' ? '#1f5fa8' : '#999'; });
    new Chart(canvas, {
      type: 'line',
      data: {labels: c.labels, datasets: [
        {label: 'latency', data: c.shown, showLine: false, pointRadius: 3,
         pointStyle: c.shown.map(function (v, i) {
           return v === c.values[i] ? 'circle' : 'triangle'; }),
         pointBackgroundColor: c.use.map(function (u, i) {
           return u === 'used' ? colours[i] : 'rgba(0,0,0,0)'; }),
         pointBorderColor: colours},
        {label: 'level', data: c.levels, stepped: 'middle', pointRadius: 0,
         borderColor: '#f28e2b', borderWidth: 2}
      ]},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        history: c,
        scales: {x: {ticks: {maxRotation: 0, autoSkip: true, maxTicksLimit: 8}},
                 y: {min: c.y_min, max: c.y_max, title: {display: true, text: 'latency (ms)'}}},
        plugins: {
          legend: {display: false},
          tooltip: {callbacks: {
            title: function (items) { return c.titles[items[0].dataIndex]; },
            label: function (t) {
              var v = t.datasetIndex === 0 ? c.values[t.dataIndex] : c.levels[t.dataIndex];
              return (t.datasetIndex === 0 ? 'latency ' : 'level ') + v.toFixed(2) + ' ms';
            },
            afterLabel: function (t) {
              var i = t.dataIndex, text = 'build ' + c.builds[i];
              if (c.low[i] !== null && c.high[i] !== null)
                text += '\ninterval ' + c.low[i].toFixed(2) + ' - ' + c.high[i].toFixed(2) + ' ms';
              if (c.use[i] !== 'used') text += '\n' + c.use[i] + ': left out of change points';
              return text;
            }}}
        }
      },
      plugins: [marks]
    });
    canvas.setAttribute('data-drawn', '1');
  });
})();
