# Re-predicts a validate report's cases on each machine given (compare --backend sim, 2 devices) and scores
# them against the report's measured times: the same measurements, several pricings.
# Usage: SPLITSCOPE=path/to/splitscope python3 repredict.py validate.json machine.json ...
import json,os,subprocess,sys,statistics
rep=json.load(open(sys.argv[1])); machines=sys.argv[2:]
S=os.environ.get('SPLITSCOPE','splitscope')
pred={}
nets=sorted(set(c['network'] for c in rep['cases']))
for m in machines:
    for n in nets:
        out=subprocess.run([S,'compare',n,'--backend','sim','--machine',m,'--devices','2','--report','repredict-compare.json'],capture_output=True,text=True)
        if out.returncode: print(out.stderr); sys.exit(1)
        for r in json.load(open('repredict-compare.json'))['runs']:
            pred[(m,n,r['strategy'])]=r['makespan_ms']['median']
errs={m:[] for m in machines}
for c in rep['cases']:
    line=f"{c['network']:10s} {c['strategy']:10s} meas {c['measured_ms']:9.1f} val-pred {c['predicted_ms']:9.1f}"
    for m in machines:
        p=pred[(m,c['network'],c['strategy'])]; e=p/c['measured_ms']-1; errs[m].append(abs(e))
        line+=f"  {p:9.1f} {100*e:+6.1f}%"
    print(line)
for m in machines:
    e=errs[m]; print(m, f"median {100*statistics.median(e):.1f}% max {100*max(e):.1f}% within10 {sum(x<=0.1 for x in e)} within25 {sum(x<=0.25 for x in e)}")
