# Re-predicts the measured runs of validate reports on machine files, without measuring again.
import json,subprocess,statistics as st,sys
machines=sys.argv[1].split(','); files=sys.argv[2:]
rows=[]
for f in files:
  for r in json.load(open(f))['cases']:
    net=r['network']; s=r['strategy']; n=r['devices']
    batch=json.load(open('models/networks/%s.json'%net))['batch']
    args=['--strategy',s,'--devices',str(1 if s=='single' else n)]
    if s=='pipeline': args+=['-m',str(min(4*n,max(1,batch//8)))]
    preds=[]
    for m in machines:
      subprocess.run(['splitscope','run',net]+args+['--backend','sim','--machine',m,'-q','--report','/tmp/r.json'],capture_output=True,text=True,check=True)
      d=json.load(open('/tmp/r.json')); rr=d['runs'][0] if 'runs' in d else d
      preds.append(rr['makespan_ms']['median'])
    meas=r['measured_ms']
    rows.append((net,s,meas,preds))
    print('%-16s %-10s meas %9.2f '%(net,s,meas)+' '.join('%9.2f (%+6.1f%%)'%(p,100*(p/meas-1)) for p in preds),flush=True)
for i,m in enumerate(machines):
  e=[abs(r[3][i]/r[2]-1) for r in rows]
  print('%-30s n %d median |err| %.1f%% max %.1f%% within10 %d within25 %d'%(m,len(e),100*st.median(e),100*max(e),sum(x<=0.1 for x in e),sum(x<=0.25 for x in e)))
