// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {HookFixture} from "./lib/HookFixture.sol";
import {ISuretyHook} from "../src/ISuretyHook.sol";

/// @notice The hook's paths in .gas-snapshot (forge's figure: no intrinsic transaction cost;
/// contracts.BenchmarkHookPathsGas reports them from receipts). A first job opens the fee and
/// balance slots first, so each figure is steady state.
contract SuretyHookGasTest is HookFixture {
    function setUp() public override {
        super.setUp();
        uint256 id = submitted();
        vm.prank(client);
        hook.approve(id);
    }

    /// @notice create, plan, fund, join (1 ETH stake), submit, reject, arbiter's 60/40 split
    /// with a 0.5 ETH slash.
    function test_gas_disputePath() public {
        uint256 id = disputed();
        vm.prank(arbiter);
        hook.resolve(id, one(worker), bps1(6_000), 0.5 ether);
        assertPhase(id, ISuretyHook.Phase.Settled);
    }

    /// @notice Three linked parts, each created, planned, funded, joined, submitted, approved.
    function test_gas_milestonePath() public {
        uint256 prev;
        for (uint256 i; i < 3; ++i) {
            ISuretyHook.Plan memory p = plan(1, 1, STAKE);
            p.prevPart = prev;
            uint256 id = funded(p);
            joinAs(id, worker);
            submitAs(id, worker);
            vm.prank(client);
            hook.approve(id);
            prev = id;
        }
        assertPhase(prev, ISuretyHook.Phase.Settled);
    }
}
