(function () {
  var charts = JSON.parse(document.getElementById('ditbench-charts').textContent);
  if (typeof Chart === 'undefined') return;
  // The 95% CI of each bar, drawn as a whisker with caps (visible when printed).
  var whiskers = {
    id: 'ciWhiskers',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, y = chart.scales.y;
      chart.data.datasets.forEach(function (ds, d) {
        var meta = chart.getDatasetMeta(d);
        if (meta.hidden || !ds.ci_low) return;
        meta.data.forEach(function (bar, i) {
          var lo = ds.ci_low[i], hi = ds.ci_high[i];
          if (lo === null || hi === null || lo <= 0) return;
          var top = y.getPixelForValue(hi), bottom = y.getPixelForValue(lo);
          var half = Math.min(6, bar.width / 4);
          ctx.save();
          ctx.strokeStyle = '#222';
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(bar.x, top); ctx.lineTo(bar.x, bottom);
          ctx.moveTo(bar.x - half, top); ctx.lineTo(bar.x + half, top);
          ctx.moveTo(bar.x - half, bottom); ctx.lineTo(bar.x + half, bottom);
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };
  // '#4e79a7' at opacity `alpha` (1: as it is).
  function faded(color, alpha) {
    if (alpha >= 1) return color;
    var n = parseInt(color.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + alpha + ')';
  }
  // Series of one strategy share its colour; the second, third... differ in shape and dash.
  var shapes = ['circle', 'triangle', 'rect', 'rectRot', 'star', 'crossRot'];
  // A point whose number is in doubt (busy, a borrowed or busy baseline, superlinear: its
  // "doubt") is drawn hollow and larger, and its tooltip names the doubt.
  function series(ds) {
    var style = ds.style || 0;
    // A point in doubt, or one its chart marks apart (a schedule's high-precision steps), hollow.
    var doubtful = function (ctx) { return ctx.raw && (ctx.raw.doubt || ctx.raw.hollow); };
    return {label: ds.label, data: ds.points, borderColor: ds.color,
            backgroundColor: function (ctx) { return doubtful(ctx) ? '#fff' : ds.color; },
            pointStyle: shapes[style % shapes.length],
            pointRadius: function (ctx) { return doubtful(ctx) ? 6 : 4; },
            pointBorderWidth: function (ctx) { return doubtful(ctx) ? 2 : 1; },
            borderDash: style ? [6, 3] : [], showLine: true};
  }
  // The largest value of a chart's points, so that an axis encloses every point with room.
  function largest(datasets, key) {
    var m = 0;
    datasets.forEach(function (ds) {
      (ds.points || []).forEach(function (p) { if (p[key] > m) m = p[key]; });
    });
    return m;
  }
  function doubtNote(p) { return p && p.doubt ? ' (in doubt: ' + p.doubt + ')' : ''; }
  // Many series: the legend goes to the right, so that it leaves the plot its height.
  function legendFor(count) {
    return count > 4 ? {position: 'right', labels: {boxWidth: 24}} : {position: 'top'};
  }
  function latency(c) {
    return {
      type: 'bar',
      data: {labels: c.labels, datasets: c.datasets.map(function (ds) {
        return {label: ds.label, data: ds.data, ci_low: ds.ci_low, ci_high: ds.ci_high,
                backgroundColor: ds.colors.map(function (col) { return faded(col, ds.alpha); }),
                borderColor: ds.colors, borderWidth: 1};
      })},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {
          x: {title: {display: true, text: 'parallel configuration'}},
          y: {type: 'logarithmic',
              title: {display: true, text: 'median latency (ms, log scale); whiskers: 95% CI'}}
        },
        plugins: {
          // Campaigns by opacity (the bars' colours are their strategies'): grey swatches.
          legend: {display: c.legend, labels: {generateLabels: function (chart) {
            return chart.data.datasets.map(function (ds, i) {
              return {text: ds.label, fillStyle: faded('#555555', c.datasets[i].alpha),
                      strokeStyle: '#555555', lineWidth: 1, datasetIndex: i,
                      hidden: !chart.isDatasetVisible(i)};
            });
          }}},
          title: {display: true, text: c.title},
          tooltip: {callbacks: {afterLabel: function (t) {
            var ds = t.chart.data.datasets[t.datasetIndex];
            var lo = ds.ci_low[t.dataIndex], hi = ds.ci_high[t.dataIndex];
            if (lo === null || hi === null) return '';
            return '95% CI ' + lo.toFixed(2) + ' - ' + hi.toFixed(2) + ' ms';
          }}}
        }
      },
      plugins: [whiskers]
    };
  }
  function speedup(c) {
    var datasets = c.datasets.map(series);
    datasets.push({label: 'ideal', data: [{x: 1, y: 1}, {x: c.max_world, y: c.max_world}],
                   borderColor: '#999', borderDash: [6, 4], pointRadius: 0, showLine: true});
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: {type: 'linear', min: 1, title: {display: true, text: 'world size (ranks)'}},
                 y: {min: 0, suggestedMax: 1.1 * Math.max(c.max_world, largest(c.datasets, 'y')),
                     title: {display: true, text: 'speedup vs 1 rank'}}},
        plugins: {title: {display: true, text: c.title}, legend: legendFor(datasets.length),
                  tooltip: {callbacks: {label: function (t) {
                    return t.dataset.label + ': ' + t.raw.x + ' ranks, ' + t.raw.y.toFixed(2) +
                           'x' + doubtNote(t.raw);
                  }}}}
      }
    };
  }
  function stages(c) {
    return {
      type: 'bar',
      data: {labels: c.labels, datasets: c.datasets.map(function (ds) {
        return {label: ds.label, data: ds.data, backgroundColor: ds.color};
      })},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: {stacked: true, title: {display: true, text: 'parallel configuration'}},
                 y: {stacked: true, min: 0,
                     title: {display: true,
                             text: c.y_title || 'median ms per iteration (slowest rank)'}}},
        plugins: {title: {display: true, text: c.title}}
      }
    };
  }
  // A scatter of one series per strategy, points joined.
  function lines(c, x, y) {
    return {
      type: 'scatter',
      data: {datasets: c.datasets.map(series)},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: x, y: y},
        plugins: {title: {display: true, text: c.title}, legend: legendFor(c.datasets.length)}
      }
    };
  }
  // A steps chart's vertical marks (c.marks: {x, label}), dashed, named at the top: where a
  // model of experts switched expert.
  function stepMarks(marks) {
    return {
      id: 'stepMarks',
      afterDatasetsDraw: function (chart) {
        var ctx = chart.ctx, area = chart.chartArea, x = chart.scales.x;
        marks.forEach(function (m, i) {
          var px = x.getPixelForValue(m.x);
          ctx.save();
          ctx.strokeStyle = '#555';
          ctx.setLineDash([5, 4]);
          ctx.beginPath();
          ctx.moveTo(px, area.top);
          ctx.lineTo(px, area.bottom);
          ctx.stroke();
          ctx.fillStyle = '#333';
          ctx.font = '11px system-ui, sans-serif';
          ctx.textAlign = 'left';
          ctx.fillText(m.label, px + 4, area.top + 12 + 13 * i);
          ctx.restore();
        });
      }
    };
  }
  function steps(c) {
    var config = lines(c, {type: 'linear', min: 0, ticks: {precision: 0},
                           title: {display: true, text: 'denoising step'}},
                       {min: 0, title: {display: true, text: 'median ms (slowest rank)'}});
    // Each step's point says what it ran (the kernels and the linear layers' form).
    config.options.plugins.tooltip = {callbacks: {label: function (t) {
      return t.dataset.label + ': step ' + t.raw.x + ', ' + t.raw.y.toFixed(2) + ' ms' +
             (t.raw.ran ? ' (' + t.raw.ran + ')' : '');
    }}};
    if (c.marks) config.plugins = [stepMarks(c.marks)];
    return config;
  }
  // Serving: latency against offered load, a solid p50 and a dashed p95 line per layout.
  function serving(c) {
    var datasets = c.datasets.map(function (ds) {
      var s = series({label: ds.label, color: ds.color, points: ds.points, style: 0});
      s.borderDash = ds.dash ? [6, 3] : [];
      return s;
    });
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: {type: 'linear', min: 0,
                     title: {display: true, text: 'offered load (requests/s)'}},
                 y: {type: 'logarithmic',
                     title: {display: true, text: 'request latency, ms (log scale)'}}},
        plugins: {title: {display: true, text: c.title}, legend: legendFor(datasets.length),
                  tooltip: {callbacks: {label: function (t) {
                    return t.dataset.label + ': ' + t.raw.x + ' requests/s, ' +
                           t.raw.y.toFixed(1) + ' ms' + doubtNote(t.raw);
                  }}}}
      }
    };
  }
  function memory(c) {
    return lines(c, {type: 'linear', min: 1, title: {display: true, text: 'world size (ranks)'}},
                 {min: 0, title: {display: true, text: 'peak memory per rank (MB)'}});
  }
  function outputError(c) {
    // An error of exactly 0 sits on the axis floor (zero_floor), labelled "0 (exact)".
    var floor = c.zero_floor;
    var atFloor = function (v) { return Math.abs(v - floor) < 1e-6 * floor; };
    // Both axes enclose every point: the largest error a decade below the top border.
    var top = Math.pow(10, Math.ceil(Math.log10(Math.max(largest(c.datasets, 'y'), floor)) + 0.5));
    var config = lines(c, {type: 'linear', min: 0,
                           suggestedMax: 1.1 * largest(c.datasets, 'x'),
                           title: {display: true, text: 'speedup vs 1 rank'}},
                       {type: 'logarithmic', min: floor, max: top, title: {display: true,
                        text: 'output error (rel. L2 vs 1 rank, log scale)'},
                        afterBuildTicks: function (axis) {
                          if (!axis.ticks.some(function (t) { return atFloor(t.value); }))
                            axis.ticks.unshift({value: floor});
                        },
                        // 1e-6, 2e-6, 5e-6, 1e-5: the rest of the log ticks unlabelled.
                        ticks: {callback: function (v) {
                          if (atFloor(v)) return '0 (exact)';
                          var text = Number(v).toExponential(0);
                          return /^[125]e/.test(text) && Math.abs(Number(text) - v) < 1e-3 * v
                                 ? text : '';
                        }}});
    config.options.plugins.tooltip = {callbacks: {label: function (t) {
      var p = t.raw;
      return t.dataset.label + ', ' + p.world + ' ranks: ' + p.x.toFixed(2) + 'x, error ' +
             (p.exact ? '0 (exact)' : p.y.toExponential(2)) + doubtNote(p);
    }}};
    return config;
  }
  // The Planner section's scatter (report/planner_section.h): a measured trial per point, x its
  // leave-one-out prediction with the 95% interval as a horizontal whisker, y its measurement,
  // log-log, with the identity line. The axes span the points; a whisker that runs past them is
  // cut at the plot's edge and ends in an arrowhead there instead of a bar.
  var intervals = {
    id: 'predictionIntervals',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, x = chart.scales.x, area = chart.chartArea;
      // A whisker's end at (at, y): a bar, or where cut an arrowhead pointing `outward` (+-1).
      var end = function (at, y, cut, outward) {
        if (!cut) { ctx.moveTo(at, y - 3); ctx.lineTo(at, y + 3); return; }
        ctx.moveTo(at - 5 * outward, y - 3); ctx.lineTo(at, y); ctx.lineTo(at - 5 * outward, y + 3);
      };
      chart.data.datasets.forEach(function (ds, d) {
        var meta = chart.getDatasetMeta(d);
        if (meta.hidden || ds.identity) return;
        meta.data.forEach(function (point, i) {
          var p = ds.data[i];
          if (!(p.lo > 0) || !(p.hi > 0)) return;
          var left = x.getPixelForValue(p.lo), right = x.getPixelForValue(p.hi);
          var cutLeft = left < area.left, cutRight = right > area.right;
          left = Math.max(left, area.left); right = Math.min(right, area.right);
          ctx.save();
          ctx.strokeStyle = ds.borderColor; ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(left, point.y); ctx.lineTo(right, point.y);
          end(left, point.y, cutLeft, -1);
          end(right, point.y, cutRight, 1);
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };
  function prediction(c) {
    var datasets = c.datasets.map(function (ds) {
      return {label: ds.label, data: ds.points, borderColor: ds.color, backgroundColor: ds.color,
              pointRadius: 4, showLine: false};
    });
    datasets.push({label: 'predicted = measured', identity: true,
                   data: [{x: c.identity_low, y: c.identity_low},
                          {x: c.identity_high, y: c.identity_high}],
                   borderColor: '#999', borderDash: [6, 4], pointRadius: 0, showLine: true});
    var axis = function (text) {
      return {type: 'logarithmic', min: c.identity_low / 1.2, max: c.identity_high * 1.2,
              title: {display: true, text: text}};
    };
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: axis('predicted latency, leave-one-out (ms, log scale); whiskers: 95% interval'),
                 y: axis('measured latency (ms, log scale)')},
        plugins: {
          title: {display: true, text: c.title}, legend: legendFor(datasets.length),
          tooltip: {callbacks: {label: function (t) {
            var p = t.raw;
            if (t.dataset.identity) return 'predicted = measured';
            return [p.label, 'predicted ' + p.x.toFixed(2) + ' ms [' + p.lo.toFixed(2) + ' - ' +
                    p.hi.toFixed(2) + '], measured ' + p.y.toFixed(2) + ' ms'];
          }}}
        }
      },
      plugins: [intervals]
    };
  }
  // The Pareto chart (report/quality_section.h): a point per configuration, speedup against
  // output quality; the front dashed, its points larger, below-quality points a red cross;
  // each point named beside it, so that a printed page needs no tooltip.
  var pointNames = {
    id: 'pointNames',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      chart.data.datasets.forEach(function (ds, d) {
        var meta = chart.getDatasetMeta(d);
        if (meta.hidden || !ds.named) return;
        meta.data.forEach(function (point, i) {
          // Near the right edge the name goes to the left of its point.
          var left = point.x > chart.chartArea.right - 0.2 * chart.chartArea.width;
          ctx.save();
          ctx.fillStyle = ds.data[i].below ? '#b42318' : '#333';
          ctx.font = '11px system-ui, sans-serif';
          ctx.textAlign = left ? 'right' : 'left';
          ctx.fillText(ds.data[i].name, point.x + (left ? -8 : 8), point.y - 6);
          ctx.restore();
        });
      });
    }
  };
  function pareto(c) {
    var ok = c.points.filter(function (p) { return !p.below; });
    var below = c.points.filter(function (p) { return p.below; });
    var atExact = function (v) { return Math.abs(v - c.exact_at) < 1e-6 * Math.abs(c.exact_at); };
    var datasets = [
      {label: 'Pareto front', data: c.front, borderColor: '#777', borderDash: [6, 4],
       pointRadius: 0, showLine: true},
      {label: 'meets its quality gates (or has none)', data: ok, named: true, showLine: false,
       // A speedup in doubt (busy, superlinear, ...) is drawn hollow, as in the other charts.
       backgroundColor: ok.map(function (p) { return p.doubt ? '#fff' : p.color; }),
       borderColor: ok.map(function (p) { return p.front && !p.doubt ? '#222' : p.color; }),
       borderWidth: ok.map(function (p) { return p.front ? 2 : 1; }),
       pointRadius: ok.map(function (p) { return p.front ? 7 : 4; })},
      {label: 'below quality (never the winner)', data: below, named: true, showLine: false,
       pointStyle: 'crossRot', pointRadius: 9, borderWidth: 3, borderColor: '#b42318',
       backgroundColor: '#b42318'}
    ];
    var x = {type: c.log_x ? 'logarithmic' : 'linear', title: {display: true, text: c.x_title},
             // The exact output's tick replaces the regular ticks it would crowd.
             afterBuildTicks: function (axis) {
               var ticks = axis.ticks.filter(function (t) { return !atExact(t.value); });
               var step = ticks.length > 1 ? Math.abs(ticks[1].value - ticks[0].value) : 0;
               axis.ticks = ticks.filter(function (t) {
                 return c.log_x ? t.value > c.exact_at * 3 : t.value < c.exact_at - 0.6 * step;
               }).concat([{value: c.exact_at}]).sort(function (a, b) { return a.value - b.value; });
             },
             ticks: {callback: function (v) {
               if (atExact(v)) return c.log_x ? '0 (exact)' : 'inf (exact)';
               if (!c.log_x) return v;
               var text = Number(v).toExponential(0);
               return /^[125]e/.test(text) && Math.abs(Number(text) - v) < 1e-3 * v ? text : '';
             }}};
    if (c.log_x) x.min = c.exact_at / 2;
    else x.max = c.exact_at + 4;
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: x, y: {min: 0, title: {display: true,
                                            text: c.y_title || 'speedup vs 1 rank'}}},
        plugins: {
          title: {display: true, text: c.title}, legend: {position: 'top'},
          tooltip: {callbacks: {label: function (t) {
            var p = t.raw;
            if (p.label === undefined) return 'Pareto front';
            return p.label + ': ' + p.y.toFixed(2) + 'x vs ' + p.reference + doubtNote(p) + ', ' +
                   (p.exact ? 'exact' : (c.log_x ? 'error ' + p.x.toExponential(2)
                                                 : 'PSNR ' + p.x.toFixed(1) + ' dB')) +
                   (p.below ? ' (' + p.quality + ')' : '');
          }}}
        }
      },
      plugins: [pointNames]
    };
  }
  var kinds = {latency: latency, speedup: speedup, stages: stages, memory: memory, serving: serving,
               error: outputError, prediction: prediction, steps: steps, pareto: pareto};
  charts.forEach(function (c) {
    var canvas = document.getElementById(c.id);
    if (!canvas || !kinds[c.kind]) return;
    new Chart(canvas, kinds[c.kind](c));
    canvas.setAttribute('data-drawn', '1');
  });
  document.body.setAttribute('data-charts-drawn', String(charts.length));
})();
