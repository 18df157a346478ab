// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./Test.sol";
import {JobEscrow} from "../../src/JobEscrow.sol";
import {IERC8183} from "../../src/IERC8183.sol";
import {MockERC20} from "../mocks/Tokens.sol";

/// @notice A deployed JobEscrow (no fees, no hooks allowed yet), a token, funded actors, and
/// helpers that walk a job through its life.
abstract contract JobFixture is Test {
    uint256 internal constant START = 1_700_000_000;
    uint256 internal constant DURATION = 1 days;
    uint256 internal constant BUDGET = 20e6; // 20 "USDC"
    string internal constant DESCRIPTION = "Generate an image of a lighthouse";

    JobEscrow internal escrow;
    MockERC20 internal token;

    address internal owner = makeAddr("owner");
    address internal treasury = makeAddr("treasury");
    address internal client = makeAddr("client");
    address internal provider = makeAddr("provider");
    address internal evaluator = makeAddr("evaluator");
    address internal stranger = makeAddr("stranger");

    bytes32 internal constant DELIVERABLE = keccak256("ipfs://the-image");
    bytes32 internal constant REASON = keccak256("looks right");

    function setUp() public virtual {
        vm.warp(START);
        escrow = new JobEscrow(owner, treasury);
        token = new MockERC20("USD Coin", "USDC");
        token.mint(client, 1_000_000e6);
        vm.prank(client);
        token.approve(address(escrow), type(uint256).max);
    }

    function expiry() internal view returns (uint256) {
        return block.timestamp + DURATION;
    }

    /// @dev createJob by the client, no hook, provider and evaluator set.
    function open() internal returns (uint256 id) {
        vm.prank(client);
        id = escrow.createJob(provider, evaluator, expiry(), DESCRIPTION, address(0), 0);
    }

    function openWithHook(address hook) internal returns (uint256 id) {
        vm.prank(client);
        id = escrow.createJob(provider, evaluator, expiry(), DESCRIPTION, hook, 0);
    }

    function budget(uint256 id, uint256 amount) internal {
        vm.prank(client);
        escrow.setBudget(id, address(token), amount, "");
    }

    function funded(uint256 amount) internal returns (uint256 id) {
        id = open();
        budget(id, amount);
        vm.prank(client);
        escrow.fund(id, amount, "");
    }

    function submitted(uint256 amount) internal returns (uint256 id) {
        id = funded(amount);
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
    }

    function statusOf(uint256 id) internal view returns (IERC8183.JobStatus) {
        return escrow.getJob(id).status;
    }

    function assertStatus(uint256 id, IERC8183.JobStatus want, string memory what) internal view {
        vm.assertEq(uint256(statusOf(id)), uint256(want), what);
    }
}
