import 'reflect-metadata';
import { loadConfigOrExit } from '@switchyard/server-config';
import { runService } from '@switchyard/server-runtime';
import { plannerOptions } from './bootstrap';

void runService(plannerOptions(loadConfigOrExit('planner')));
