import 'reflect-metadata';
import { loadConfigOrExit } from '@switchyard/server-config';
import { runService } from '@switchyard/server-runtime';
import { gatewayOptions } from './bootstrap';

void runService(gatewayOptions(loadConfigOrExit('gateway')));
